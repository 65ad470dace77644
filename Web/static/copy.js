// "Copy" beside a read-only field (the calendar address): puts its text on the clipboard and
// says so. Without JavaScript (or a clipboard) the field is still there to select.
(function () {
  'use strict';
  Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (button) {
    var field = document.getElementById(button.dataset.copy);
    var status = document.getElementById(button.dataset.copy + '-status');
    if (!field) { return; }
    button.hidden = false;
    button.addEventListener('click', function () {
      field.select();
      var done = function () { if (status) { status.textContent = button.dataset.copied; } };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand('copy'); done(); });
      } else {
        document.execCommand('copy');
        done();
      }
    });
  });
}());
