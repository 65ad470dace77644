// Times are the clinic's, with its zone named. Where this browser's clock shows the same
// time at that instant, the name is only noise: hide it. (Without JavaScript it stays.)
(function () {
  'use strict';
  Array.prototype.forEach.call(document.querySelectorAll('.zone[data-at]'), function (element) {
    var offset = -new Date(element.dataset.at).getTimezoneOffset();
    if (offset === parseInt(element.dataset.offset, 10)) { element.hidden = true; }
  });
}());
