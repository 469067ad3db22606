// runsdesk progressive enhancement. Every page works without this file; it only
//  1. moves the focus to an error summary when a page shows one, so it is announced;
//  2. refreshes relative times (<time data-relative>) once a minute, with the wording of
//     views.RelativeTime;
//  3. asks for confirmation before submitting a form marked data-confirm="question";
//  4. reloads a page marked live ([data-live]: a run that is queued or running) every 3 s
//     while the tab is visible and nobody is typing; without it the page has a Refresh link;
//  5. saves an input form marked data-draft (the address of its "Save draft" button) as a
//     draft every few seconds while the person types in it, in the background (the request
//     carries the form's CSRF field and the X-Runsdesk-Autosave header; the server answers
//     204); without it the button saves;
//  6. reveals the copy buttons ([data-copy]: the id of the element whose text it copies) and
//     copies that text to the clipboard on a click, saying so on the button; without it (or
//     without a clipboard) the buttons stay hidden and the text is selected by hand.
"use strict";

(function () {
  function focusErrorSummary() {
    var summary = document.querySelector("[data-error-summary]");
    if (summary) {
      summary.focus();
    }
  }

  function relative(then, now) {
    var d = now - then;
    var future = d < 0;
    if (future) {
      d = -d;
    }
    var sec = d / 1000;
    var n;
    var unit;
    if (sec < 45) {
      return "just now";
    } else if (sec < 90 * 60) {
      n = Math.max(Math.round(sec / 60), 1);
      unit = "minute";
    } else if (sec < 36 * 3600) {
      n = Math.round(sec / 3600);
      unit = "hour";
    } else {
      n = Math.round(sec / 86400);
      unit = "day";
    }
    if (n !== 1) {
      unit += "s";
    }
    return future ? "in " + n + " " + unit : n + " " + unit + " ago";
  }

  function refreshTimes() {
    var now = Date.now();
    var nodes = document.querySelectorAll("time[data-relative]");
    for (var i = 0; i < nodes.length; i++) {
      var then = Date.parse(nodes[i].getAttribute("datetime"));
      if (!isNaN(then)) {
        nodes[i].textContent = relative(then, now);
      }
    }
  }

  function confirmSubmits(event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  }

  function typing() {
    var el = document.activeElement;
    return !!el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
      (el.tagName === "INPUT" && el.type !== "hidden"));
  }

  function pollLive() {
    if (!document.querySelector("[data-live]")) {
      return;
    }
    window.setInterval(function () {
      if (document.visibilityState === "visible" && !typing()) {
        window.location.reload();
      }
    }, 3000);
  }

  function autosaveDraft(form) {
    var changed = false;
    var status = form.querySelector("[data-draft-status]");
    function mark() {
      changed = true;
    }
    form.addEventListener("input", mark);
    form.addEventListener("change", mark);
    form.addEventListener("submit", function () {
      changed = false;
    });
    window.setInterval(function () {
      if (!changed) {
        return;
      }
      changed = false;
      window.fetch(form.getAttribute("data-draft"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-Runsdesk-Autosave": "1" },
        body: new URLSearchParams(new FormData(form))
      }).then(function (res) {
        if (status) {
          status.textContent = res.ok
            ? "Draft saved automatically at " + new Date().toLocaleTimeString() + "."
            : "The draft could not be saved automatically; use Save draft.";
        }
      }, function () {
        changed = true;
      });
    }, 3000);
  }

  function autosaveDrafts() {
    var forms = document.querySelectorAll("form[data-draft]");
    for (var i = 0; i < forms.length; i++) {
      autosaveDraft(forms[i]);
    }
  }

  function copyButtons() {
    if (!navigator.clipboard) {
      return;
    }
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      wireCopy(buttons[i]);
    }
  }

  function wireCopy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) {
      return;
    }
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Copy failed; select the text";
      });
      window.setTimeout(function () {
        button.textContent = label;
      }, 3000);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    focusErrorSummary();
    copyButtons();
    refreshTimes();
    window.setInterval(refreshTimes, 60 * 1000);
    pollLive();
    autosaveDrafts();
  });
  document.addEventListener("submit", confirmSubmits);
})();
