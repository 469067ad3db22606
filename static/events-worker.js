// runsdesk live desk: the one event stream a browser keeps for all its tabs. Each page's
// script (app.js) connects to this shared worker and asks it to open the stream at the URL
// it names; the worker opens it once (an EventSource, which resumes with Last-Event-ID by
// itself) and passes every event on to every connected page. A page says goodbye when it is
// left; without pages the browser ends the worker and the stream with it.
"use strict";

var ports = [];
var source = null;
var names = ["run", "inbox", "resync"];

function broadcast(message) {
  for (var i = 0; i < ports.length; i++) {
    ports[i].postMessage(message);
  }
}

function open(url) {
  if (source) {
    return;
  }
  source = new EventSource(url);
  names.forEach(function (name) {
    source.addEventListener(name, function (event) {
      broadcast({ type: name, data: event.data });
    });
  });
  source.addEventListener("error", function () {
    if (source && source.readyState === EventSource.CLOSED) {
      source = null;
      broadcast({ type: "closed" });
    }
  });
}

self.addEventListener("connect", function (event) {
  var port = event.ports[0];
  ports.push(port);
  port.addEventListener("message", function (message) {
    var m = message.data || {};
    if (m.type === "open" && typeof m.url === "string") {
      open(m.url);
    } else if (m.type === "bye") {
      ports = ports.filter(function (p) {
        return p !== port;
      });
      if (ports.length === 0 && source) {
        source.close();
        source = null;
      }
    }
  });
  port.start();
});
