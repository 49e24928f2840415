// kmm replicate's status page: the server renders everything (the page works without this
// script, as a snapshot with a refresh link); this only fetches a fresh copy of the live part
// (./?fragment=1, the same template) every refresh_seconds and says how fresh it is.
(function () {
  'use strict';
  var live = document.getElementById('live');
  var fresh = document.getElementById('freshness');
  if (!live || !fresh || !window.fetch) {
    return;
  }
  document.documentElement.className += ' js';
  var every = (Number(live.getAttribute('data-refresh')) || 2) * 1000;
  var lastOK = Date.now();
  var failure = '';
  var timer = null;

  function two(n) { return (n < 10 ? '0' : '') + n; }
  function clock(ms) {
    var d = new Date(ms);
    return two(d.getUTCHours()) + ':' + two(d.getUTCMinutes()) + ':' + two(d.getUTCSeconds()) + 'Z';
  }
  function generated() {
    var g = live.querySelector('.generated');
    var t = g ? Date.parse(g.getAttribute('data-generated')) : NaN;
    return isNaN(t) ? lastOK : t;
  }
  function show() {
    var age = Math.max(0, Math.round((Date.now() - lastOK) / 1000));
    if (failure) {
      fresh.textContent = 'NOT UPDATING: kmm does not answer (' + failure + ') since ' + clock(lastOK) +
        ', ' + age + ' s ago; showing the state of ' + clock(generated()) + '. Retrying every ' + every / 1000 + ' s.';
      fresh.className = 'freshness stale';
      document.title = document.title.replace(/^(NOT UPDATING · )?/, 'NOT UPDATING · ');
    } else {
      fresh.textContent = 'Live: updated every ' + every / 1000 + ' s, last at ' + clock(generated()) + '.';
      fresh.className = 'freshness';
      var h = live.querySelector('.summary .badge');
      document.title = document.title.replace(/^(NOT UPDATING · )?[A-Z]+ · /, (h ? h.textContent : 'kmm') + ' · ');
    }
  }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(tick, document.hidden ? every * 5 : every);
  }
  function tick() {
    var ctl = window.AbortController ? new AbortController() : null;
    var stop = setTimeout(function () { if (ctl) { ctl.abort(); } }, Math.max(every * 3, 5000));
    fetch('./?fragment=1', { cache: 'no-store', headers: { 'Accept': 'text/html' }, signal: ctl ? ctl.signal : undefined })
      .then(function (r) {
        if (!r.ok) { throw new Error('HTTP ' + r.status); }
        return r.text();
      })
      .then(function (html) {
        live.innerHTML = html; // rendered and escaped by the server's html/template
        lastOK = Date.now();
        failure = '';
      })
      .catch(function (e) {
        failure = (e && e.name === 'AbortError') ? 'timed out' : String((e && e.message) || e);
      })
      .then(function () {
        clearTimeout(stop);
        show();
        schedule();
      });
  }
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden) { tick(); }
  });
  show();
  setInterval(show, 1000);
  schedule();
})();
