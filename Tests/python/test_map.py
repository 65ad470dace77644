"""The map of the nearest clinics (issue 46) in headless Chromium, against `clinic serve` on the
default directory: the first view holds the ten listed clinics and the search point; the names
of places never overlap each other, the markers' labels or the search point, at three zooms; a
small town (Marfa, TX: 1,733 people) is named once zoomed in to where one looks for it, and not
before; a marker tapped marks its row in the list, a row tapped (or its "Show on map" button,
by keyboard) centres the map on its clinic with the popup open; on a 390 x 844 phone the map
starts in the upper half of the first screen. axe-core and the tap-target check on the pages."""
import urllib.parse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from test_web import Checked, browser, log_in, wait_for_map

DESK = (1280, 800)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from conftest import directory_site
    with directory_site(str(tmp_path_factory.mktemp("map"))) as (clinic, server):
        yield clinic, server


def phone():
    """Chromium as a 390 x 844 phone: a headless window is at least 500 px wide, so the page
    is laid out for the phone's own size."""
    driver = browser(size=(500, 844))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    return driver


def nearest(driver, page, server, address):
    """The nearest clinics to an address, the map drawn, the page audited."""
    page.get(server.url + "/clinics/nearest?address=" + urllib.parse.quote(address))
    wait_for_map(driver)
    page.audit()


def listed(driver):
    """The listed clinics: (id, name, lat, lon) of each row of #nearest-list."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#nearest-list li'), function (li) {"
        "  return [li.dataset.id, li.querySelector('a').textContent.trim(), parseFloat(li.dataset.lat), parseFloat(li.dataset.lon)]; });")


def origin(driver):
    element = driver.find_element(By.ID, "map")
    return float(element.get_attribute("data-lat")), float(element.get_attribute("data-lon"))


def view(driver):
    """The map's view: south, west, north, east and its zoom."""
    return driver.execute_script(
        "var map = document.getElementById('map')._leafletMap, b = map.getBounds();"
        "return [b.getSouth(), b.getWest(), b.getNorth(), b.getEast(), map.getZoom()];")


def zoom_to(driver, at, zoom):
    """The map at `zoom` around `at`, once its place names are placed (every state in view
    fetched): map.js says so in data-labelled."""
    driver.execute_script(
        "var element = document.getElementById('map'); element.dataset.labelled = '';"
        "element._leafletMap.setView(arguments[0], arguments[1], { animate: false });", list(at), zoom)
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "map").get_attribute("data-labelled") == str(zoom))


LABELS = """
// Every label on the map, in page pixels: the places' names and the markers' two labels; and
// the search point's marker.
function box(node) { var r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
var labels = Array.prototype.filter.call(document.querySelectorAll('#map .place-name, #map .map-label'), function (node) {
  var r = node.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(node).visibility !== 'hidden';
}).map(function (node) { return { text: node.textContent.trim(), place: node.classList.contains('place-name'), box: box(node) }; });
var marker = document.querySelector('#map .origin-marker');
return { labels: labels, origin: marker ? box(marker) : null };
"""


def intersect(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def labels_apart(driver):
    """The labels on the map (text, is a place's name) after checking that no two intersect
    and none covers the search point's marker."""
    seen = driver.execute_script(LABELS)
    labels, marker = seen["labels"], seen["origin"]
    for i, first in enumerate(labels):
        for second in labels[i + 1:]:
            assert not intersect(first["box"], second["box"]), (first, second)
        if marker:
            assert not intersect(first["box"], marker), ("covers the search point", first, marker)
    return [(label["text"], label["place"]) for label in labels]


def test_the_first_view_holds_the_listed_clinics_and_the_search_point(site):
    """Issue 46: the first view fitted only the nearest clinic and the search point; nine of
    the ten listed clinics could be off the map. Now all ten and the point are in view, and
    the view is no wider than it takes (they span more than a third of it one way). Without a
    search, the whole country."""
    _, server = site
    driver = phone()
    page = Checked(driver)
    try:
        for address in ["Marfa, TX", "Chicago, IL"]:
            nearest(driver, page, server, address)
            south, west, north, east, zoom = view(driver)
            points = [(lat, lon) for _, _, lat, lon in listed(driver)] + [origin(driver)]
            assert len(points) == 11, points
            outside = [p for p in points if not (south <= p[0] <= north and west <= p[1] <= east)]
            assert not outside, (address, (south, west, north, east), outside)
            lats, lons = [p[0] for p in points], [p[1] for p in points]
            assert (max(lats) - min(lats)) / (north - south) > 1 / 3 or (max(lons) - min(lons)) / (east - west) > 1 / 3, \
                (address, zoom, (south, west, north, east), points)
        page.get(server.url + "/clinics/nearest")
        wait_for_map(driver)
        assert view(driver)[4] == 4
    finally:
        driver.quit()


@pytest.mark.parametrize("address", ["Chicago, IL", "Dallas, TX"])
def test_labels_never_overlap_and_leave_the_search_point_in_sight(site, address):
    """Issue 46: zooming out piled names on each other, and a town's name covered the search
    point. At zooms 11, 8 and 5 around a dense place, no two labels (the places' names, and
    "Nearest" and "Your search point") intersect, none covers the search point's marker, the
    search point is drawn above the names, and fewer names are shown the further out."""
    _, server = site
    driver = browser(size=DESK)
    page = Checked(driver)
    try:
        nearest(driver, page, server, address)
        at = origin(driver)
        names = {}
        for zoom in (11, 8, 5):
            zoom_to(driver, at, zoom)
            labels = labels_apart(driver)
            names[zoom] = [text for text, place in labels if place]
            assert {"Nearest", "Your search point"} <= {text for text, place in labels if not place}, labels
        assert len(names[11]) >= 5 and len(names[8]) >= 3 and not names[5], names
        city = address.split(",")[0]
        assert city in names[8], names
        # The search point's pane is above the names' pane: a name never paints over it.
        panes = driver.execute_script(
            "var map = document.getElementById('map')._leafletMap;"
            "return [+map.getPane('labels').style.zIndex, +map.getPane('search').style.zIndex, "
            "        document.querySelector('#map .origin-marker').closest('.leaflet-pane').classList.contains('leaflet-search-pane')];")
        assert panes[0] < panes[1] and panes[2], panes
    finally:
        driver.quit()


def test_a_small_town_is_named_once_zoomed_in(site):
    """Issue 46: Marfa, TX (1,733 people) was blank but for county lines at any zoom. It is
    named at zoom 10 and closer, beside the search point (its own place), not at zoom 8, where
    the map shows only places of 10,000 people or more."""
    _, server = site
    driver = phone()
    page = Checked(driver)
    try:
        nearest(driver, page, server, "Marfa, TX")
        at = origin(driver)
        for zoom, named in ((8, False), (10, True), (12, True)):
            zoom_to(driver, at, zoom)
            places = [text for text, place in labels_apart(driver) if place]
            assert ("Marfa" in places) == named, (zoom, places)
    finally:
        driver.quit()


def row(driver, clinic_id):
    return driver.find_element(By.CSS_SELECTOR, "#nearest-list li[data-id='%s']" % clinic_id)


def selected(driver):
    return [item.get_attribute("data-id") for item in driver.find_elements(By.CSS_SELECTOR, "#nearest-list li.selected")]


def popup_names(driver):
    return driver.execute_script("return Array.from(document.querySelectorAll('.leaflet-popup-content a'), function (a) {"
                                 "  return a.textContent.trim(); });")


def centred(driver, lat, lon):
    """How far (CSS px) a point is from the middle of the map."""
    return driver.execute_script(
        "var map = document.getElementById('map')._leafletMap, p = map.latLngToContainerPoint(arguments[0]),"
        "    c = map.getSize().divideBy(2); return Math.max(Math.abs(p.x - c.x), Math.abs(p.y - c.y));", [lat, lon])


@pytest.mark.parametrize("size", [(390, 844), DESK], ids=["phone", "desk"])
def test_the_list_and_the_map_lead_to_each_other(site, size):
    """Issue 46: a marker tapped marks its row (and brings it into sight); a row tapped
    (anywhere but its links) centres the map on its clinic, clustered or not, with its popup
    open; each row's "Show on map" button does the same from the keyboard. Its row's links
    still lead to the clinic's page."""
    _, server = site
    driver = phone() if size[0] < 500 else browser(size=size)
    page = Checked(driver)
    try:
        nearest(driver, page, server, "Dallas, TX")
        rows = listed(driver)
        highlighted = driver.find_element(By.ID, "map").get_attribute("data-highlighted")
        assert highlighted == rows[0][0]
        assert not selected(driver)
        # The star tapped: its row marked, and in sight (under the map on a phone).
        star = driver.find_element(By.CSS_SELECTOR, ".nearest-marker")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", star)
        star.click()
        WebDriverWait(driver, 10).until(lambda d: selected(d) == [highlighted])
        assert rows[0][1] in popup_names(driver)
        assert driver.execute_script("var r = arguments[0].getBoundingClientRect(); return r.top >= -1 && r.bottom <= innerHeight + 1;",
                                     row(driver, highlighted))
        # A tap on a row's text: a clinic further down the list, clustered at first.
        far_id, far_name, far_lat, far_lon = rows[6]
        target = row(driver, far_id).find_element(By.CSS_SELECTOR, "div")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", target)
        target.click()
        WebDriverWait(driver, 15).until(lambda d: far_name in popup_names(d))
        assert selected(driver) == [far_id]
        assert centred(driver, far_lat, far_lon) <= 2
        assert driver.execute_script("return document.getElementById('map').getBoundingClientRect().top") >= -1  # in sight
        # The popup closed, the row is no longer marked; its marker, tapped on the map, marks it again.
        driver.execute_script("document.getElementById('map')._leafletMap.closePopup();")
        assert not selected(driver)
        marker = [m for m in driver.find_elements(By.CSS_SELECTOR, ".leaflet-marker-pane .clinic-marker")
                  if m.get_attribute("title") == far_name and m.is_displayed()]
        assert marker, far_name
        marker[0].click()
        WebDriverWait(driver, 10).until(lambda d: selected(d) == [far_id])
        assert far_name in popup_names(driver)
        # By keyboard: the third row's "Show on map".
        third_id, third_name, third_lat, third_lon = rows[2]
        button = row(driver, third_id).find_element(By.CSS_SELECTOR, "button.show-on-map")
        assert button.text == "Show on map"
        driver.execute_script("arguments[0].focus();", button)
        button.send_keys(Keys.ENTER)
        WebDriverWait(driver, 15).until(lambda d: third_name in popup_names(d))
        assert selected(driver) == [third_id] and centred(driver, third_lat, third_lon) <= 2
        page.audit()
        # The row's own link is still a link.
        link = row(driver, third_id).find_element(By.CSS_SELECTOR, "a")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
        link.click()
        WebDriverWait(driver, 15).until(lambda d: d.current_url.endswith("/clinics/%s" % third_id))
    finally:
        driver.quit()


def test_on_a_phone_the_map_starts_in_the_first_screen(site):
    """Issue 46: on a phone the map started halfway down the first screen (a signed-in
    patient's menu takes three lines). After a search the form is two short rows (the field
    beside its button) and the map starts in the upper half of a 390 x 844 screen; at 1280 px
    the map is beside the list and nothing is wider than the window."""
    clinic, server = site
    clinic.register("mapanna", city="Springfield, IL")
    driver = phone()
    page = Checked(driver)
    try:
        log_in(driver, server.url, "mapanna")
        page.get(server.url + "/clinics/nearest?me=1")
        wait_for_map(driver)
        page.audit()
        top = driver.execute_script("return document.getElementById('map').getBoundingClientRect().top + scrollY")
        assert top < 844 / 2, top
        field, button = driver.find_element(By.ID, "address"), driver.find_element(By.CSS_SELECTOR, "#search button[type=submit]")
        assert abs(field.rect["y"] - button.rect["y"]) < 2 and button.rect["x"] > field.rect["x"], (field.rect, button.rect)
        assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
        # A desk: the map beside the list, as before.
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.set_window_size(*DESK)
        page.get(server.url + "/clinics/nearest?address=" + urllib.parse.quote("Springfield, IL"))
        wait_for_map(driver)
        page.audit()
        map_box = driver.find_element(By.ID, "map").rect
        list_box = driver.find_element(By.ID, "nearest-list").rect
        assert list_box["x"] >= map_box["x"] + map_box["width"] and abs(list_box["y"] - map_box["y"]) < 60, (map_box, list_box)
        assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth")
    finally:
        driver.quit()
