// The clinics map: our own base layer (states and countries, Data/basemap.geojson), every
// clinic as clustered markers, the point searched from, and the nearest clinic highlighted
// with its own labelled marker. The first view holds the listed clinics and the point searched
// from. The filters redraw the map and the list; the list stays in distance order. A marker
// and its row in the list lead to each other.
(function () {
  'use strict';
  var element = document.getElementById('map');
  if (!element || !window.L) { return; }
  var locate = document.getElementById('use-location');
  if (locate && navigator.geolocation) {
    locate.hidden = false;
    locate.addEventListener('click', function () {
      navigator.geolocation.getCurrentPosition(function (position) {
        window.location.href = '/clinics/nearest?lat=' + position.coords.latitude.toFixed(5) + '&lon=' + position.coords.longitude.toFixed(5);
      });
    });
  }
  var tiles = element.getAttribute('data-tiles');
  var list = document.getElementById('nearest-list');
  var lat = parseFloat(element.dataset.lat), lon = parseFloat(element.dataset.lon);
  var origin = isNaN(lat) || isNaN(lon) ? null : L.latLng(lat, lon);
  var map = L.map(element, { zoomControl: true, attributionControl: !!tiles, minZoom: 2, maxZoom: 17 });
  // The browser tests read the view from here (Tests/python/test_map.py).
  element._leafletMap = map;
  // Panes, bottom to top: our base layer (200), the places' names (350), Leaflet's overlays
  // (400) and markers (600), the search point (620: a town's name or a clinic never hides it,
  // and taps go through it to the marker under it), tooltips (650), popups (700).
  map.createPane('base');
  map.getPane('base').style.zIndex = 200;
  map.createPane('labels');
  map.getPane('labels').style.zIndex = 350;
  map.createPane('search');
  map.getPane('search').style.zIndex = 620;

  // The listed clinics still shown (the filters hide some) and the search point, for the view.
  function listed() {
    var bounds = L.latLngBounds([]);
    if (origin) { bounds.extend(origin); }
    if (list) {
      Array.prototype.forEach.call(list.children, function (item) {
        var at = [parseFloat(item.dataset.lat), parseFloat(item.dataset.lon)];
        if (!item.hidden && !isNaN(at[0]) && !isNaN(at[1])) { bounds.extend(at); }
      });
    }
    return bounds;
  }
  // Room at the top for the "Nearest" label and at the bottom for the search point's.
  var framing = { paddingTopLeft: [24, 48], paddingBottomRight: [24, 40], maxZoom: 13 };
  function frame() {
    var bounds = listed();
    if (bounds.isValid()) { map.fitBounds(bounds, framing); }
  }
  // Without a search, the whole country.
  if (listed().isValid()) { frame(); } else { map.setView([39.5, -98.35], 4); }

  // The operator's street tiles (CLINIC_TILE_URL), off by default: then the map asks nothing
  // of anyone else. With them, our own layer is drawn as outlines over the streets.
  if (tiles) {
    L.tileLayer(tiles, { attribution: element.getAttribute('data-tiles-attribution') || '', maxZoom: 19 }).addTo(map);
  }
  fetch(element.getAttribute('data-basemap') || '/static/basemap.geojson').then(function (r) { return r.json(); }).then(function (data) {
    L.geoJSON(data, {
      pane: 'base', interactive: false,
      style: function (feature) {
        var fill = tiles ? 0 : 1;
        return feature.properties.kind === 'state'
          ? { color: '#6b7280', weight: 1, fillColor: '#f1f5e9', fillOpacity: fill }
          : { color: '#9ca3af', weight: 0.6, fillColor: '#f8f8f4', fillOpacity: fill };
      }
    }).addTo(map);
  });

  // Detail at city zoom (7 and closer): county lines, place names, lakes (filled) and major rivers
  // (one file per U.S. state, and one for its water),
  // fetched for the states in view (their boxes are in the index) and kept once fetched.
  var detailIndex = null, indexAsked = false, detailLoaded = {}, pending = 0, places = [];
  var detailLines = L.layerGroup().addTo(map), placeLabels = L.layerGroup().addTo(map);
  var measure = document.createElement('canvas').getContext('2d'), labelFont = null;
  var GAP = 4, LABEL_HEIGHT = 16;

  // A name's width in the labels' own font (read once from map.css), without laying it out.
  function textWidth(text) {
    if (!labelFont) {
      var probe = L.DomUtil.create('div', 'leaflet-marker-icon place-name', map.getPane('labels'));
      var style = window.getComputedStyle(probe);
      labelFont = style.fontStyle + ' ' + style.fontWeight + ' ' + style.fontSize + ' ' + style.fontFamily;
      L.DomUtil.remove(probe);
      measure.font = labelFont;
    }
    return measure.measureText(text).width;
  }
  function overlaps(a, b) { return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; }
  function clear(box, boxes) {
    for (var i = 0; i < boxes.length; i++) { if (overlaps(box, boxes[i])) { return false; } }
    return true;
  }
  function grown(box, by) { return { left: box.left - by, top: box.top - by, right: box.right + by, bottom: box.bottom + by }; }
  // What a name must leave in sight, in the map's pixels: the search point and the nearest
  // clinic (`pins`), with the two labels and the map's buttons (`hard`); and, if it can, the
  // other clinics' markers and clusters, drawn over the names (`soft`).
  function boxesOf(selector) {
    var frame = element.getBoundingClientRect(), boxes = [];
    Array.prototype.forEach.call(element.querySelectorAll(selector), function (node) {
      var box = node.getBoundingClientRect();
      if (box.width || box.height) {
        boxes.push(grown({ left: box.left - frame.left, top: box.top - frame.top, right: box.right - frame.left, bottom: box.bottom - frame.top }, GAP));
      }
    });
    return boxes;
  }
  // Where a name goes: on its place, unless a marker or a label is there; then just above,
  // below, right or left of it, clear of every marker. The first five names (the largest places
  // in view) and that of the place under the search point or the nearest clinic (the place
  // searched for) may go beside it under another clinic's marker rather than not at all. Never
  // over another name (larger places came first), never cut by the map's edge. Null: not shown.
  function spotFor(at, width, size, pins, hard, soft, taken) {
    var half = width / 2, aside = LABEL_HEIGHT / 2 + 22;
    var moves = [[0, 0], [0, -aside], [0, aside], [half + 24, 0], [-half - 24, 0]];
    function boxAt(move) {
      var x = at.x + move[0], y = at.y + move[1];
      return { left: x - half, top: y - LABEL_HEIGHT / 2, right: x + half, bottom: y + LABEL_HEIGHT / 2 };
    }
    function free(box, avoid) {
      return box.left >= 0 && box.top >= 0 && box.right <= size.x && box.bottom <= size.y && clear(box, avoid) && clear(grown(box, GAP), taken);
    }
    var all = hard.concat(soft), home = boxAt(moves[0]), first = 0, passes = [all];
    if (clear(home, all)) {
      moves = moves.slice(0, 1);
    } else {
      first = 1;
      if (taken.length < 5 || !clear({ left: at.x, top: at.y, right: at.x + 1, bottom: at.y + 1 }, pins)) { passes.push(hard); }
    }
    for (var pass = 0; pass < passes.length; pass++) {
      for (var i = first; i < moves.length; i++) {
        var box = boxAt(moves[i]);
        if (free(box, passes[pass])) { return { box: box, anchor: [half - moves[i][0], LABEL_HEIGHT / 2 - moves[i][1]] }; }
      }
    }
    return null;
  }
  function labelPlaces() {
    placeLabels.clearLayers();
    var zoom = map.getZoom();
    if (zoom >= 7) {
      // Larger places first; towns of a few thousand people only from zoom 9 or 10, where one
      // looks for them; and fewer names on a smaller map.
      var least = zoom >= 10 ? 1000 : zoom >= 9 ? 5000 : zoom >= 8 ? 10000 : 25000;
      var size = map.getSize(), most = Math.min(40, Math.round(size.x * size.y / 6000));
      var pins = boxesOf('.origin-marker, .nearest-marker'), hard = pins.concat(boxesOf('.map-label, .leaflet-control')), taken = [];
      var soft = boxesOf('.leaflet-marker-pane > .leaflet-marker-icon:not(.nearest-marker)');
      for (var i = 0; i < places.length && taken.length < most; i++) {
        var place = places[i];
        if (place.population < least) { continue; }
        var at = map.latLngToContainerPoint(place.at);
        if (at.x < 0 || at.y < 0 || at.x > size.x || at.y > size.y) { continue; }
        // An even width: the anchor at its middle is a whole pixel.
        var width = 2 * Math.ceil(textWidth(place.name) / 2 + 2);
        var spot = spotFor(at, width, size, pins, hard, soft, taken);
        if (!spot) { continue; }
        taken.push(spot.box);
        var text = document.createElement('span');
        text.textContent = place.name;
        placeLabels.addLayer(L.marker(place.at, {
          icon: L.divIcon({ className: 'place-name', html: text, iconSize: [width, LABEL_HEIGHT], iconAnchor: spot.anchor }),
          interactive: false, keyboard: false, pane: 'labels'
        }));
      }
    }
    // The zoom whose names are all placed (every state in view fetched): the tests wait for it.
    if (pending === 0) { element.dataset.labelled = String(zoom); }
  }
  function loadDetail() {
    var url = element.getAttribute('data-basemap-index');
    if (map.getZoom() < 7 || !url) { labelPlaces(); return; }
    if (!detailIndex) {
      if (!indexAsked) {
        indexAsked = true;
        pending++;
        fetch(url).then(function (r) { return r.json(); }).then(function (index) {
          detailIndex = index;
          pending--;
          loadDetail();
        }, function () { indexAsked = false; pending--; labelPlaces(); });
      }
      return;
    }
    var view = map.getBounds();
    detailIndex.states.forEach(function (state) {
      var box = L.latLngBounds([state.bbox[1], state.bbox[0]], [state.bbox[3], state.bbox[2]]);
      if (detailLoaded[state.state] || !view.intersects(box)) { return; }
      detailLoaded[state.state] = true;
      if (state.water) {
        fetch(state.water).then(function (r) { return r.json(); }).then(function (data) {
          detailLines.addLayer(L.geoJSON(data, { pane: 'base', interactive: false, style: function (feature) {
            // A lake lying whole in the state's box is a polygon, filled; rivers and cut shores are lines.
            return feature.properties.kind === 'lake' ? { color: '#3b82f6', weight: 1, fillColor: '#93c5fd', fillOpacity: 0.85 }
              : { color: '#60a5fa', weight: 1.2 };
          } }));
        });
      }
      pending++;
      fetch(state.url).then(function (r) { return r.json(); }).then(function (data) {
        data.features.forEach(function (feature) {
          if (feature.properties.kind === 'place') {
            places.push({ name: feature.properties.name, population: feature.properties.population,
                          at: L.latLng(feature.geometry.coordinates[1], feature.geometry.coordinates[0]) });
          } else {
            detailLines.addLayer(L.geoJSON(feature, { pane: 'base', interactive: false,
                                                       style: { color: '#a8a29e', weight: 0.8, dashArray: '3 3' } }));
          }
        });
        places.sort(function (a, b) { return b.population - a.population; });
      }).then(function () { pending--; labelPlaces(); }, function () { pending--; labelPlaces(); });
    });
    labelPlaces();
  }
  // While the map zooms the names keep their size and would pile up: gone until it stops.
  map.on('zoomstart', function () { placeLabels.clearLayers(); });

  // Three markers a patient tells apart, each labelled (the legend under the map says the
  // same): the point searched from (a blue dot, "Your search point"), the nearest clinic (an
  // amber star, "Nearest") and the other clinics (a teal cross, clustered).
  var originMarker = null;
  if (origin) {
    originMarker = L.circleMarker(origin, { radius: 9, color: '#1d4ed8', weight: 3, fillColor: '#93c5fd', fillOpacity: 0.9,
                                            className: 'origin-marker', pane: 'search', interactive: false }).addTo(map);
  }
  // The two labels point away from each other: "Nearest" on the side of its clinic away from
  // the search point, the search point's on the other, so neither covers the other nor a marker.
  function labelMarkers(nearest) {
    var south = nearest && origin && nearest.getLatLng().lat < origin.lat;
    if (originMarker) {
      originMarker.unbindTooltip().bindTooltip(element.dataset.originLabel || '', { permanent: true, className: 'map-label',
        direction: south ? 'top' : 'bottom', offset: south ? [0, -12] : [0, 12] });
    }
    if (nearest) {
      nearest.bindTooltip(element.dataset.nearestLabel || '', { permanent: true, className: 'map-label',
        direction: south ? 'bottom' : 'top', offset: south ? [0, 16] : [0, -16] });
    }
  }
  labelMarkers(null);
  var clinicIcon = L.divIcon({ className: 'clinic-marker', html: '<span aria-hidden="true">+</span>', iconSize: [26, 26], iconAnchor: [13, 13] });
  // Clusters that split and merge at once (no animation): where they are is where the names
  // make room for them. Added before the names' own `moveend`, so they are in place first.
  var cluster = L.markerClusterGroup({ showCoverageOnHover: false, animate: false });
  map.addLayer(cluster);
  map.on('moveend', loadDetail);
  var nearestMarker = null, markersById = {};
  var filters = document.getElementById('map-filters');
  var pediatric = document.getElementById('filter-pediatric');
  var hospital = document.getElementById('filter-hospital');
  var specialization = document.getElementById('filter-specialization');

  // The row of the clinic whose popup is open is marked.
  function select(id) {
    if (!list) { return; }
    Array.prototype.forEach.call(list.children, function (item) { item.classList.toggle('selected', item.dataset.id === id); });
  }
  // A marker tapped (or reached by keyboard): its row brought into sight, beside the map on a
  // desk, under it on a phone. A row tapped leaves the list where it is.
  function reveal(id) {
    var item = list && list.querySelector('li[data-id="' + id + '"]');
    if (item) { item.scrollIntoView({ block: 'nearest' }); }
  }
  cluster.on('popupopen', function (event) { select(String(event.layer.options.clinicId)); });
  cluster.on('popupclose', function () { select(null); });
  cluster.on('click', function (event) { reveal(String(event.layer.options.clinicId)); });
  // A row's clinic, centred with its popup open: zoomed in until its marker is out of its
  // cluster, and clinics at one address spread out at the last zoom.
  function showOnMap(item) {
    var marker = markersById[item.dataset.id];
    element.scrollIntoView({ block: 'nearest' });
    map.closePopup();
    select(item.dataset.id);
    if (!marker) {
      // Before the markers are drawn: the place alone.
      map.setView([parseFloat(item.dataset.lat), parseFloat(item.dataset.lon)], Math.max(map.getZoom(), 12));
      return;
    }
    cluster.unspiderfy();
    var at = marker.getLatLng(), zoom = Math.min(map.getZoom(), 13);
    map.setView(at, zoom, { animate: false });
    if (marker !== nearestMarker) {
      while (cluster.getVisibleParent(marker) !== marker && zoom < map.getMaxZoom()) { map.setView(at, ++zoom, { animate: false }); }
      var parent = cluster.getVisibleParent(marker);
      if (parent && parent !== marker && parent.spiderfy) { parent.spiderfy(); }
    }
    marker.openPopup();
  }
  if (list) {
    // "Show on map" in each row: the keyboard's way to what a tap on the row does.
    var showLabel = list.dataset.showOnMap || (document.documentElement.lang === 'ru' ? 'Показать на карте' : 'Show on map');
    Array.prototype.forEach.call(list.children, function (item) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'show-on-map';
      button.textContent = showLabel;
      var name = item.querySelector('a');
      if (name && name.id) { button.setAttribute('aria-describedby', name.id); }
      item.appendChild(button);
    });
    // A tap on a row (its links still go where they go).
    list.addEventListener('click', function (event) {
      var item = event.target.closest('li');
      if (!item || !list.contains(item)) { return; }
      if (event.target.closest('a') || (event.target.closest('button') && !event.target.closest('button.show-on-map'))) { return; }
      showOnMap(item);
    });
  }

  function popup(clinic) {
    var box = document.createElement('div');
    var title = document.createElement('a');
    title.href = '/clinics/' + clinic[0];
    title.textContent = clinic[1];
    box.appendChild(title);
    box.appendChild(document.createElement('br'));
    var book = document.createElement('a');
    book.href = '/clinics/' + clinic[0] + '/book';
    book.textContent = element.dataset.book;
    book.className = 'popup-book';
    box.appendChild(book);
    return box;
  }

  function matches(clinic) {
    if (pediatric.checked && !(clinic[4] & 1)) { return false; }
    if (hospital.checked && !(clinic[4] & 2)) { return false; }
    if (specialization.value !== '' && clinic[5].indexOf(parseInt(specialization.value, 10)) < 0) { return false; }
    return true;
  }

  function draw(data, byId, refit) {
    cluster.clearLayers();
    if (nearestMarker) { map.removeLayer(nearestMarker); nearestMarker = null; }
    markersById = {};
    var nearestId = null;
    if (list) {
      // The list is in distance order: the first item still shown is the nearest.
      Array.prototype.forEach.call(list.children, function (item) {
        var clinic = byId[item.dataset.id];
        var shown = !clinic || matches(clinic);
        item.hidden = !shown;
        item.classList.remove('nearest');
        if (shown && nearestId === null) { nearestId = item.dataset.id; item.classList.add('nearest'); }
      });
    }
    var markers = [];
    data.clinics.forEach(function (clinic) {
      if (!matches(clinic) || String(clinic[0]) === nearestId) { return; }
      var marker = L.marker([clinic[2], clinic[3]], { icon: clinicIcon, title: clinic[1], alt: clinic[1], clinicId: clinic[0] })
        .bindPopup(popup(clinic));
      markersById[String(clinic[0])] = marker;
      markers.push(marker);
    });
    cluster.addLayers(markers);
    var nearest = nearestId && byId[nearestId];
    if (nearest) {
      var icon = L.divIcon({ className: 'nearest-marker', html: '<span>★</span>', iconSize: [30, 30], iconAnchor: [15, 15] });
      // Labelled, not covered by an open popup: a tap opens it.
      nearestMarker = L.marker([nearest[2], nearest[3]], { icon: icon, title: nearest[1], alt: nearest[1], zIndexOffset: 1000 })
        .bindPopup(popup(nearest), { className: 'nearest-popup' })
        .on('popupopen', function () { select(String(nearest[0])); })
        .on('popupclose', function () { select(null); })
        .on('click', function () { reveal(String(nearest[0])); })
        .addTo(map);
      nearestMarker.getElement().dataset.id = String(nearest[0]);
      markersById[String(nearest[0])] = nearestMarker;
    }
    labelMarkers(nearestMarker);
    if (refit) { frame(); }
    element.dataset.drawn = String(markers.length + (nearest ? 1 : 0));
    element.dataset.highlighted = nearest ? String(nearest[0]) : '';
    // The names make room for the new labels.
    labelPlaces();
  }

  fetch('/clinics/map.json').then(function (r) { return r.json(); }).then(function (data) {
    var byId = {};
    data.clinics.forEach(function (clinic) { byId[String(clinic[0])] = clinic; });
    // The specializations in the page's language (map.json carries each language's names).
    var names = (data.namesByLanguage && data.namesByLanguage[document.documentElement.lang]) || data.names;
    names.forEach(function (name, index) {
      var option = document.createElement('option');
      option.value = String(index);
      option.textContent = name;
      specialization.appendChild(option);
    });
    filters.hidden = false;
    var legend = document.getElementById('map-legend');
    if (legend) { legend.hidden = false; }
    // One set of filters: the map's. The search form's own checkboxes (which work without
    // JavaScript) are hidden, follow the map's, and go with the next search.
    [['search-pediatric', pediatric], ['search-hospital', hospital]].forEach(function (pair) {
      var searchBox = document.getElementById(pair[0]);
      if (!searchBox) { return; }
      pair[1].checked = searchBox.checked;
      searchBox.closest('label').hidden = true;
      pair[1].addEventListener('change', function () { searchBox.checked = pair[1].checked; });
    });
    [pediatric, hospital, specialization].forEach(function (control) {
      control.addEventListener('change', function () { draw(data, byId, true); });
    });
    draw(data, byId, false);
  });
  loadDetail();
}());
