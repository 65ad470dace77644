// The appointment page's upload form, sent in the background so that a slow link shows its
// progress; without JavaScript the form posts as it is. A refusal shows the server's words.
(function () {
  "use strict";
  var form = document.getElementById("upload");
  if (!form || !window.FormData || !window.XMLHttpRequest || !window.DOMParser) { return; }
  var progress = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");
  var button = form.querySelector("button[type=submit]");

  function failed(text) {
    progress.hidden = true;
    status.textContent = text;
    status.className = "error";
    button.disabled = false;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.upload.addEventListener("progress", function (e) {
      if (!e.lengthComputable) { return; }
      var percent = Math.round(100 * e.loaded / e.total);
      progress.hidden = false;
      progress.value = percent;
      progress.textContent = percent + "%";
      status.className = "";
      status.textContent = form.getAttribute("data-sending") + " " + percent + "%";
    });
    request.addEventListener("load", function () {
      if (request.status < 400) {
        progress.value = 100;
        window.location.reload();
        return;
      }
      var page = new DOMParser().parseFromString(request.responseText, "text/html");
      var message = page.querySelector("[role=alert]");
      failed(message ? message.textContent : form.getAttribute("data-failed"));
    });
    request.addEventListener("error", function () { failed(form.getAttribute("data-failed")); });
    request.addEventListener("abort", function () { failed(form.getAttribute("data-failed")); });
    button.disabled = true;
    status.className = "";
    status.textContent = form.getAttribute("data-sending");
    request.send(new FormData(form));
  });
}());
