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
//  7. turns the inbox's "Select all on this page" button ([data-select-all-fallback], which
//     re-renders the page with every box ticked) into a checkbox ([data-select-all]) that ticks
//     and unticks the page's bulk checkboxes in place;
//  8. on a page answering a POST whose input form is marked data-replace-url (a 422), saves
//     the form as a draft (when it has one) and shows that address (the run page) instead,
//     with history.replaceState, so a reload loads the run page with the values restored
//     rather than posting again;
//  9. on a waiting run's page ([data-presence]: the heartbeat's address), reports every 15 s
//     while the tab is visible that the page is open, and shows who else has it open (the
//     server's sentence); without it the line shows who had it open when the page loaded.
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

  function saveDraft(form) {
    return window.fetch(form.getAttribute("data-draft"), {
      method: "POST",
      credentials: "same-origin",
      keepalive: true,
      headers: { "X-Runsdesk-Autosave": "1" },
      body: new URLSearchParams(new FormData(form))
    });
  }

  function replacePostedAddress() {
    var form = document.querySelector("form[data-replace-url]");
    if (!form || !window.history.replaceState) {
      return;
    }
    if (form.hasAttribute("data-draft")) {
      saveDraft(form).catch(function () {});
    }
    window.history.replaceState(null, "", form.getAttribute("data-replace-url"));
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
      saveDraft(form).then(function (res) {
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

  function selectAll() {
    var box = document.querySelector("input[data-select-all]");
    if (!box) {
      return;
    }
    var boxes = document.querySelectorAll("input.bulk__check[name='run']");
    var i;
    document.querySelectorAll("[data-select-all]").forEach(function (e) {
      e.hidden = false;
    });
    document.querySelectorAll("[data-select-all-fallback]").forEach(function (e) {
      e.hidden = true;
    });
    function sync() {
      var ticked = 0;
      for (i = 0; i < boxes.length; i++) {
        if (boxes[i].checked) {
          ticked++;
        }
      }
      box.checked = ticked > 0 && ticked === boxes.length;
      box.indeterminate = ticked > 0 && ticked < boxes.length;
    }
    box.addEventListener("change", function () {
      for (i = 0; i < boxes.length; i++) {
        boxes[i].checked = box.checked;
      }
    });
    for (i = 0; i < boxes.length; i++) {
      boxes[i].addEventListener("change", sync);
    }
    sync();
  }

  function presence() {
    var line = document.querySelector("[data-presence]");
    if (!line) {
      return;
    }
    window.setInterval(function () {
      if (document.visibilityState !== "visible") {
        return;
      }
      window.fetch(line.getAttribute("data-presence"), {
        method: "POST",
        credentials: "same-origin",
        body: new URLSearchParams({ _csrf: line.getAttribute("data-csrf") })
      }).then(function (res) {
        return res.ok ? res.json() : null;
      }).then(function (seen) {
        if (seen && typeof seen.text === "string") {
          line.textContent = seen.text;
        }
      }).catch(function () {});
    }, 15 * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    focusErrorSummary();
    presence();
    copyButtons();
    refreshTimes();
    window.setInterval(refreshTimes, 60 * 1000);
    pollLive();
    autosaveDrafts();
    selectAll();
    replacePostedAddress();
  });
  document.addEventListener("submit", confirmSubmits);
})();
