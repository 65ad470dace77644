// "Print" buttons (the claim code, the day list, the calendar): the browser's print, with the
// print stylesheet. Without JavaScript the buttons stay hidden; the browser's own Print works.
(function () {
  'use strict';
  Array.prototype.forEach.call(document.querySelectorAll('button[data-print]'), function (button) {
    button.hidden = false;
    button.addEventListener('click', function () { window.print(); });
  });
}());
