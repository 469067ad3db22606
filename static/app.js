// runsdesk progressive enhancement. Every page works without this file; it only
//  1. moves the focus to an error summary when a page shows one, so it is announced;
//  2. refreshes relative times (<time data-relative>) once a minute, with the wording of
//     views.RelativeTime;
//  3. asks for confirmation before submitting a form marked data-confirm="question";
//  4. reloads a page marked live ([data-live]: a run that is queued or running) every 3 s
//     while the tab is visible and nobody is typing, in a browser without EventSource (item
//     10 follows the desk instead); without it the page has a Refresh link;
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
// 10. follows the live desk (body[data-events]: the Server-Sent Events stream) with one stream
//     for all the browser's tabs: a shared worker (body[data-events-worker]) where there is
//     one, else the tab that holds a Web Lock opens it and passes its events to the others on
//     a BroadcastChannel (another tab takes over when it closes). On the inbox an inbox event
//     fetches the same page again and replaces its counts and rows ([data-live-region]),
//     keeping ticked boxes, the focus and what is typed; on a run page a run event about it
//     replaces its status, summary and timeline and, when they moved, its card (not one typed
//     in or showing errors); when someone else decided, it keeps the card as it was with its
//     buttons disabled under a banner saying who decided. A region that says the same as
//     before is left as it is. Without EventSource, item 4 reloads live pages instead.
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

  var liveNames = ["run", "inbox", "resync"];
  // countsFresh is how long after an inbox event the inbox is read once more: its tab counts
  // are cached for up to 2 s, its rows never.
  var countsFresh = 2500;

  function followDesk(url, workerURL, onEvent) {
    if (window.SharedWorker && workerURL) {
      try {
        var worker = new window.SharedWorker(workerURL, { name: "runsdesk-events" });
        worker.port.addEventListener("message", function (m) {
          onEvent(m.data || {});
        });
        worker.port.start();
        worker.port.postMessage({ type: "open", url: url });
        window.addEventListener("pagehide", function () {
          worker.port.postMessage({ type: "bye" });
        });
        return;
      } catch (e) {
        // fall through to a stream of this tab's own
      }
    }
    if (window.BroadcastChannel && navigator.locks) {
      var channel = new window.BroadcastChannel("runsdesk-events");
      channel.addEventListener("message", function (m) {
        onEvent(m.data || {});
      });
      navigator.locks.request("runsdesk-events", function () {
        onEvent({ type: "resync" });
        return new Promise(function () {
          openStream(url, function (message) {
            onEvent(message);
            channel.postMessage(message);
          });
        });
      });
      return;
    }
    openStream(url, onEvent);
  }

  function openStream(url, onEvent) {
    var source = new window.EventSource(url);
    liveNames.forEach(function (name) {
      source.addEventListener(name, function (event) {
        onEvent({ type: name, data: event.data });
      });
    });
  }

  function fetchPage(then) {
    window.fetch(window.location.href, { credentials: "same-origin" }).then(function (res) {
      return res.ok ? res.text() : null;
    }).then(function (html) {
      if (html) {
        then(new window.DOMParser().parseFromString(html, "text/html"));
      }
    }).catch(function () {});
  }

  function region(doc, name) {
    return doc.querySelector("[data-live-region='" + name + "']");
  }

  function typingIn(el) {
    var a = document.activeElement;
    return !!el && !!a && el.contains(a) && (a.tagName === "TEXTAREA" || a.tagName === "SELECT" ||
      (a.tagName === "INPUT" && ["hidden", "checkbox", "radio", "submit", "button"].indexOf(a.type) < 0));
  }

  function signature(el) {
    var copy = el.cloneNode(true);
    copy.querySelectorAll("input[name='idempotency_key']").forEach(function (input) {
      input.removeAttribute("value");
    });
    copy.querySelectorAll("time[data-relative]").forEach(function (time) {
      time.textContent = "";
    });
    return copy.innerHTML;
  }

  function replaceRegion(doc, name) {
    var here = region(document, name);
    var there = region(doc, name);
    if (!here || !there || signature(here) === signature(there)) {
      return false;
    }
    var focused = document.activeElement;
    var focusKey = focused && here.contains(focused) ? focused.getAttribute("data-testid") || focused.id : "";
    var ticked = {};
    here.querySelectorAll("input[type='checkbox']:checked").forEach(function (box) {
      ticked[box.name + "=" + box.value] = true;
    });
    here.replaceChildren.apply(here, Array.prototype.slice.call(there.childNodes).map(function (node) {
      return document.importNode(node, true);
    }));
    here.querySelectorAll("input[type='checkbox']").forEach(function (box) {
      if (ticked[box.name + "=" + box.value]) {
        box.checked = true;
      }
    });
    if (focusKey) {
      var again = here.querySelector("[data-testid='" + focusKey + "']") || document.getElementById(focusKey);
      if (again) {
        again.focus();
      }
    }
    return true;
  }

  function liveInbox() {
    var due = {};
    function refresh() {
      if (typingIn(region(document, "inbox-rows"))) {
        return;
      }
      fetchPage(function (doc) {
        replaceRegion(doc, "inbox-tabs");
        if (replaceRegion(doc, "inbox-rows")) {
          selectAll();
        }
        refreshTimes();
      });
    }
    function after(ms, again) {
      if (due[ms] && !again) {
        return;
      }
      window.clearTimeout(due[ms]);
      due[ms] = window.setTimeout(function () {
        due[ms] = 0;
        refresh();
      }, ms);
    }
    return function () {
      after(200, false);
      after(countsFresh, true);
    };
  }

  function newestDecision(doc) {
    var rows = doc.querySelectorAll("[data-live-region='run-timeline'] tr[data-decision]");
    return rows.length ? rows[rows.length - 1] : null;
  }

  function liveRun(uuid) {
    var card = region(document, "run-card");
    var edited = !!card && !!card.querySelector("[data-error-summary]");
    var stale = false;
    if (card) {
      card.addEventListener("input", function () {
        edited = true;
      });
    }
    var me = document.querySelector("[data-testid='signed-in-user']");
    var myName = me ? me.textContent.trim() : "";
    return function (message) {
      if (message.type === "run" && JSON.parse(message.data || "{}").uuid !== uuid) {
        return;
      }
      fetchPage(function (doc) {
        var before = newestDecision(document);
        var after = newestDecision(doc);
        var decided = after && (!before || before.querySelector("td").textContent !== after.querySelector("td").textContent);
        var moved = replaceRegion(doc, "run-status");
        moved = replaceRegion(doc, "run-timeline") || moved;
        replaceRegion(doc, "run-summary");
        if (!moved) {
          refreshTimes();
          return;
        }
        if (decided && after.getAttribute("data-decided-by") !== myName && card && card.querySelector("form")) {
          staleCard(card, after.getAttribute("data-decision"));
          stale = true;
        } else if (!stale && !edited && !typingIn(card)) {
          replaceRegion(doc, "run-card");
        }
        refreshTimes();
      });
    };
  }

  function staleCard(card, decision) {
    var banner = document.querySelector("[data-testid='live-banner']");
    if (!banner) {
      banner = document.createElement("p");
      banner.className = "alert alert--info";
      banner.setAttribute("role", "alert");
      banner.setAttribute("data-testid", "live-banner");
      card.parentNode.insertBefore(banner, card);
    }
    banner.textContent = decision.charAt(0).toUpperCase() + decision.slice(1) +
      " while you were reading. Reload the page to see where the run is now.";
    card.querySelectorAll("button, input[type='submit']").forEach(function (button) {
      button.disabled = true;
    });
  }

  function liveDesk() {
    var url = document.body.getAttribute("data-events");
    if (!url || !window.EventSource) {
      return false;
    }
    var onInbox = region(document, "inbox-rows") ? liveInbox() : null;
    var status = region(document, "run-status");
    var onRun = status ? liveRun(status.getAttribute("data-live-run")) : null;
    if (!onInbox && !onRun) {
      return true;
    }
    followDesk(url, document.body.getAttribute("data-events-worker"), function (message) {
      if (onInbox && (message.type === "inbox" || message.type === "resync")) {
        onInbox();
      }
      if (onRun && (message.type === "run" || message.type === "resync")) {
        onRun(message);
      }
    });
    return true;
  }

  document.addEventListener("DOMContentLoaded", function () {
    focusErrorSummary();
    presence();
    copyButtons();
    refreshTimes();
    window.setInterval(refreshTimes, 60 * 1000);
    if (!liveDesk()) {
      pollLive();
    }
    autosaveDrafts();
    selectAll();
    replacePostedAddress();
  });
  document.addEventListener("submit", confirmSubmits);
})();
