// The clinics map (the only script of the web app): our own base layer (states and
// countries, Data/basemap.geojson), every clinic as clustered markers, the point searched
// from, and the nearest clinic highlighted with its own marker and an open popup. The
// filters redraw the map and the list; the list stays in distance order.
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
  var map = L.map(element, { zoomControl: true, attributionControl: false, minZoom: 2, maxZoom: 17 }).setView([39.5, -98.35], 4);
  map.createPane('base');
  map.getPane('base').style.zIndex = 200;
  fetch(element.getAttribute('data-basemap') || '/static/basemap.geojson').then(function (r) { return r.json(); }).then(function (data) {
    L.geoJSON(data, {
      pane: 'base', interactive: false,
      style: function (feature) {
        return feature.properties.kind === 'state'
          ? { color: '#6b7280', weight: 1, fillColor: '#f1f5e9', fillOpacity: 1 }
          : { color: '#9ca3af', weight: 0.6, fillColor: '#f8f8f4', fillOpacity: 1 };
      }
    }).addTo(map);
  });
  var lat = parseFloat(element.dataset.lat), lon = parseFloat(element.dataset.lon);
  var origin = isNaN(lat) ? null : L.latLng(lat, lon);
  if (origin) {
    L.circleMarker(origin, { radius: 8, color: '#1d4ed8', weight: 3, fillColor: '#93c5fd', fillOpacity: 0.9, className: 'origin-marker' })
      .addTo(map).bindTooltip(element.dataset.nearestLabel ? '⌖' : '');
  }
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
      markers.push(L.marker([clinic[2], clinic[3]], { title: clinic[1], alt: clinic[1] }).bindPopup(popup(clinic)));
    });
    cluster.addLayers(markers);
    var nearest = nearestId && byId[nearestId];
    if (nearest) {
      var icon = L.divIcon({ className: 'nearest-marker', html: '<span>★</span>', iconSize: [30, 30], iconAnchor: [15, 15] });
      nearestMarker = L.marker([nearest[2], nearest[3]], { icon: icon, title: nearest[1], alt: nearest[1], zIndexOffset: 1000 })
        .bindPopup(popup(nearest), { autoClose: false, className: 'nearest-popup' }).addTo(map);
      nearestMarker.getElement().dataset.id = String(nearest[0]);
      nearestMarker.openPopup();
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
    [pediatric, hospital, specialization].forEach(function (control) {
      control.addEventListener('change', function () { draw(data, byId); });
    });
    draw(data, byId);
  });
}());
