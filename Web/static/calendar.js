// The front desk's calendar, better with JavaScript (issue 29). Without it every step is a link
// or a form; with it:
// - the days, the views and the filters load in place (no full reload; the address and the
//   browser's Back follow);
// - an appointment's "Move" drags (mouse, pen or touch: pointer events) onto a free time of its
//   department; a dialog asks the reason the patient reads, and the same form as the move page
//   is posted to /staff/move/{id}. A click on "Move" still opens the move page, which is also
//   the keyboard's way.
// The rules stay the server's: a refused move shows the server's words and changes nothing.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!window.fetch || !window.DOMParser || !window.history.pushState || !script) { return; }
  var movedText = script.getAttribute("data-moved");
  var movedNotToldText = script.getAttribute("data-moved-not-told");
  var failedText = script.getAttribute("data-failed");

  function main() { return document.getElementById("main"); }

  function say(text, isError) {
    var status = document.getElementById("calendar-status");
    if (!status) { return; }
    status.textContent = text;
    status.className = isError ? "error" : "ok";
  }

  // Loads a calendar address into the page: its <main> replaces ours. `keepPlace` (after a
  // move): the page stays scrolled where it was, down and across each day's table, and the
  // focus is not moved to the title (which would scroll to the top).
  function load(url, push, keepPlace) {
    var x = window.scrollX, y = window.scrollY;
    var across = Array.prototype.map.call(document.querySelectorAll(".calendar-scroll"), function (box) { return box.scrollLeft; });
    document.documentElement.setAttribute("aria-busy", "true");
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (response) {
      return response.text().then(function (text) {
        var page = new DOMParser().parseFromString(text, "text/html");
        var fresh = page.getElementById("main");
        if (!response.ok || !fresh || response.url.indexOf("/staff/calendar") < 0) {
          window.location.assign(url); // an error page or the log-in: show it whole
          return;
        }
        main().innerHTML = fresh.innerHTML;
        document.title = page.title;
        if (push) { window.history.pushState({ calendar: true }, "", response.url); }
        if (keepPlace) {
          Array.prototype.forEach.call(document.querySelectorAll(".calendar-scroll"), function (box, index) {
            if (index < across.length) { box.scrollLeft = across[index]; }
          });
          window.scrollTo(x, y);
          return;
        }
        var title = document.getElementById("calendar-title");
        if (title) { title.focus(); }
      });
    }).catch(function () {
      window.location.assign(url);
    }).then(function () {
      document.documentElement.removeAttribute("aria-busy");
    });
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) { return; }
    var link = event.target.closest ? event.target.closest("nav.days a") : null;
    if (!link || !main().contains(link)) { return; }
    event.preventDefault();
    load(link.href, true);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("filters")) { return; }
    event.preventDefault();
    var query = new URLSearchParams(new FormData(form)).toString();
    load(form.action + "?" + query, true);
  });

  window.addEventListener("popstate", function () {
    load(window.location.href, false);
  });

  // Drag to move.
  var drag = null; // {handle, cell, id, department, startX, startY, moving, over}
  var dropped = null; // the move waiting for the dialog
  var swallowClick = false;

  function targets(department) {
    return main().querySelectorAll("td.free[data-department='" + department + "']");
  }

  function freeCellAt(x, y) {
    var element = document.elementFromPoint(x, y);
    var cell = element && element.closest ? element.closest("td.free") : null;
    return cell && drag && cell.getAttribute("data-department") === drag.department ? cell : null;
  }

  function endDrag() {
    if (!drag) { return; }
    drag.cell.classList.remove("dragging");
    Array.prototype.forEach.call(main().querySelectorAll(".drop-target, .drop-over"), function (cell) {
      cell.classList.remove("drop-target", "drop-over");
    });
    drag = null;
  }

  document.addEventListener("pointerdown", function (event) {
    var handle = event.target.closest ? event.target.closest("a.move") : null;
    if (!handle || !main().contains(handle) || event.button !== 0) { return; }
    var cell = handle.closest("td.taken");
    if (!cell) { return; }
    drag = { handle: handle, cell: cell, id: cell.getAttribute("data-id"), department: cell.getAttribute("data-department"),
             startX: event.clientX, startY: event.clientY, moving: false, over: null, pointer: event.pointerId };
  });

  document.addEventListener("pointermove", function (event) {
    if (!drag || event.pointerId !== drag.pointer) { return; }
    if (!drag.moving) {
      if (Math.abs(event.clientX - drag.startX) + Math.abs(event.clientY - drag.startY) < 8) { return; }
      drag.moving = true;
      drag.cell.classList.add("dragging");
      Array.prototype.forEach.call(targets(drag.department), function (cell) { cell.classList.add("drop-target"); });
    }
    event.preventDefault();
    var cell = freeCellAt(event.clientX, event.clientY);
    if (cell !== drag.over) {
      if (drag.over) { drag.over.classList.remove("drop-over"); }
      if (cell) { cell.classList.add("drop-over"); }
      drag.over = cell;
    }
  });

  document.addEventListener("pointerup", function (event) {
    if (!drag || event.pointerId !== drag.pointer) { return; }
    var wasMoving = drag.moving;
    var cell = wasMoving ? freeCellAt(event.clientX, event.clientY) : null;
    var moving = { id: drag.id, when: drag.handle.getAttribute("data-when") };
    endDrag();
    if (!wasMoving) { return; } // a click: the move page opens
    swallowClick = true;
    window.setTimeout(function () { swallowClick = false; }, 0);
    if (cell) { ask(moving, cell); }
  });

  document.addEventListener("pointercancel", endDrag);
  document.addEventListener("dragstart", function (event) {
    if (event.target.closest && event.target.closest("table.calendar")) { event.preventDefault(); }
  });
  document.addEventListener("click", function (event) {
    if (swallowClick) { event.preventDefault(); event.stopPropagation(); swallowClick = false; }
  }, true);

  // The dialog is part of the calendar's <main>, so it is looked up anew (a load replaces it).
  function ask(moving, cell) {
    dropped = { id: moving.id, slot: cell.getAttribute("data-slot"), date: cell.getAttribute("data-date") };
    var what = (moving.when || "") + " → " + (cell.getAttribute("data-label") || "");
    var dialog = document.getElementById("move-dialog");
    if (!dialog || !dialog.showModal) {
      move(window.prompt(what, ""));
      return;
    }
    document.getElementById("move-dialog-what").textContent = what;
    var reason = document.getElementById("move-reason");
    reason.value = "";
    dialog.returnValue = "";
    dialog.onclose = function () { move(dialog.returnValue === "move" ? reason.value : null); };
    dialog.showModal();
  }

  function csrf() {
    var field = document.querySelector("input[name=csrf]");
    return field ? field.value : "";
  }

  function move(reason) {
    var chosen = dropped;
    dropped = null;
    if (!chosen || reason === null) { return; }
    var body = new URLSearchParams();
    body.set("csrf", csrf());
    body.set("date", chosen.date);
    body.set("slot", chosen.slot);
    body.set("reason", reason);
    say("…", false);
    fetch("/staff/move/" + encodeURIComponent(chosen.id), {
      method: "POST", credentials: "same-origin", redirect: "manual", body: body,
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json" }
    }).then(function (response) {
      if (response.ok) {
        // "The patient is told" only when they are (a walk-in without an account is not).
        return response.json().then(function (answer) {
          return load(window.location.href, false, true).then(function () {
            say(answer.patientTold ? movedText : movedNotToldText, false);
          });
        });
      }
      return response.text().then(function (text) {
        var page = new DOMParser().parseFromString(text, "text/html");
        var message = page.querySelector("[role=alert]");
        say(message ? message.textContent.trim() : failedText, true);
      });
    }).catch(function () { say(failedText, true); });
  }
})();
