// The clinics map: our own base layer (states and countries, Data/basemap.geojson), every
// clinic as clustered markers, the point searched from, and the nearest clinic highlighted
// with its own labelled marker. The filters redraw the map and the list; the list stays in
// distance order.
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
  var map = L.map(element, { zoomControl: true, attributionControl: !!tiles, minZoom: 2, maxZoom: 17 }).setView([39.5, -98.35], 4);
  map.createPane('base');
  map.getPane('base').style.zIndex = 200;
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
  var detailIndex = null, detailLoaded = {}, places = [];
  var detailLines = L.layerGroup().addTo(map), placeLabels = L.layerGroup().addTo(map);
  function labelPlaces() {
    placeLabels.clearLayers();
    var zoom = map.getZoom();
    if (zoom < 7) { return; }
    // Larger places first; the smaller ones as the map zooms in; at most 40 names at once.
    var least = zoom >= 11 ? 10000 : zoom >= 10 ? 25000 : zoom >= 9 ? 50000 : zoom >= 8 ? 100000 : 250000;
    var bounds = map.getBounds(), shown = 0;
    for (var i = 0; i < places.length && shown < 40; i++) {
      var place = places[i];
      if (place.population < least || !bounds.contains(place.at)) { continue; }
      placeLabels.addLayer(L.marker(place.at, {
        icon: L.divIcon({ className: 'place-label', html: '', iconSize: null }), interactive: false, keyboard: false, pane: 'base'
      }).bindTooltip(place.name, { permanent: true, direction: 'center', className: 'place-name', interactive: false }));
      shown++;
    }
  }
  function loadDetail() {
    var url = element.getAttribute('data-basemap-index');
    if (map.getZoom() < 7 || !url) { labelPlaces(); return; }
    var ready = detailIndex ? Promise.resolve(detailIndex) : fetch(url).then(function (r) { return r.json(); });
    ready.then(function (index) {
      detailIndex = index;
      var view = map.getBounds();
      index.states.forEach(function (state) {
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
          labelPlaces();
        });
      });
      labelPlaces();
    });
  }
  map.on('moveend', loadDetail);

  var lat = parseFloat(element.dataset.lat), lon = parseFloat(element.dataset.lon);
  var origin = isNaN(lat) ? null : L.latLng(lat, lon);
  // Three markers a patient tells apart, each labelled (the legend under the map says the
  // same): the point searched from (a blue dot, "Your search point"), the nearest clinic (an
  // amber star, "Nearest") and the other clinics (a teal cross, clustered).
  if (origin) {
    L.circleMarker(origin, { radius: 9, color: '#1d4ed8', weight: 3, fillColor: '#93c5fd', fillOpacity: 0.9, className: 'origin-marker' })
      .addTo(map).bindTooltip(element.dataset.originLabel || '', { permanent: true, direction: 'bottom', className: 'map-label' });
  }
  var clinicIcon = L.divIcon({ className: 'clinic-marker', html: '<span aria-hidden="true">+</span>', iconSize: [26, 26], iconAnchor: [13, 13] });
  var cluster = L.markerClusterGroup({ showCoverageOnHover: false });
  map.addLayer(cluster);
  var nearestMarker = null;
  var list = document.getElementById('nearest-list');
  var filters = document.getElementById('map-filters');
  var pediatric = document.getElementById('filter-pediatric');
  var hospital = document.getElementById('filter-hospital');
  var specialization = document.getElementById('filter-specialization');

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

  function draw(data, byId) {
    cluster.clearLayers();
    if (nearestMarker) { map.removeLayer(nearestMarker); nearestMarker = null; }
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
      markers.push(L.marker([clinic[2], clinic[3]], { icon: clinicIcon, title: clinic[1], alt: clinic[1] }).bindPopup(popup(clinic)));
    });
    cluster.addLayers(markers);
    var nearest = nearestId && byId[nearestId];
    if (nearest) {
      var icon = L.divIcon({ className: 'nearest-marker', html: '<span>★</span>', iconSize: [30, 30], iconAnchor: [15, 15] });
      // Labelled, not covered by an open popup: a tap opens it.
      nearestMarker = L.marker([nearest[2], nearest[3]], { icon: icon, title: nearest[1], alt: nearest[1], zIndexOffset: 1000 })
        .bindPopup(popup(nearest), { className: 'nearest-popup' })
        .bindTooltip(element.dataset.nearestLabel || '', { permanent: true, direction: 'top', offset: [0, -16], className: 'map-label' })
        .addTo(map);
      nearestMarker.getElement().dataset.id = String(nearest[0]);
      var bounds = L.latLngBounds([[nearest[2], nearest[3]]]);
      if (origin) { bounds.extend(origin); }
      map.fitBounds(bounds.pad(0.4), { maxZoom: 13 });
    }
    element.dataset.drawn = String(markers.length + (nearest ? 1 : 0));
    element.dataset.highlighted = nearest ? String(nearest[0]) : '';
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
      control.addEventListener('change', function () { draw(data, byId); });
    });
    draw(data, byId);
  });
}());
