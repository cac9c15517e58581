/*! Waveline now-playing widget. <waveline-now-playing station="st_…"></waveline-now-playing>, or
 * <script src="…/embed/now-playing.js" data-station="st_…"></script> (the box goes after the script).
 * Reads only the public realtime feed: no credential. Styling: CSS custom properties --waveline-* and
 * ::part(container|artwork|label|title|artist|programme|status). See docs/embed.md. */
(function () {
  'use strict';
  var FEED = '__WAVELINE_FEED__'; // the gateway's public URL, filled in when Waveline serves this file
  var TAG = 'waveline-now-playing';
  if (typeof customElements === 'undefined' || customElements.get(TAG)) return;

  var OFFLINE_AFTER_MS = 1500; // a reconnect faster than this (a gateway restart) never shows "offline"
  var MAX_BACKOFF_MS = 60000; // after error statuses (a refused station): 5 s, 10 s … 60 s
  var RENDER_DELAY_MS = 20; // the current state arrives as several frames: draw once

  var CSS =
    ':host{display:block;contain:content;font:var(--waveline-font,inherit);color:var(--waveline-fg,inherit)}' +
    '[part=container]{display:flex;gap:var(--waveline-gap,.75em);align-items:center;padding:var(--waveline-padding,.75em);' +
    'background:var(--waveline-bg,transparent);border-radius:var(--waveline-radius,.5em);border:var(--waveline-border,1px solid rgba(127,127,127,.35));min-width:0}' +
    '.art{flex:0 0 auto;width:var(--waveline-art-size,4em);height:var(--waveline-art-size,4em);border-radius:calc(var(--waveline-radius,.5em)/2);' +
    'background:var(--waveline-art-bg,rgba(127,127,127,.2));overflow:hidden}' +
    '[part=artwork]{display:block;width:100%;height:100%;object-fit:cover}' +
    '[part=artwork][hidden]{display:none}' +
    '.text{flex:1 1 auto;min-width:0;line-height:1.3}' +
    '.text p{margin:0;min-height:1.3em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}' +
    '[part=label],[part=status]{font-size:.75em;text-transform:uppercase;letter-spacing:.06em;color:var(--waveline-muted,inherit);opacity:.8}' +
    '[part=title]{font-weight:700;font-size:1.1em}' +
    '[part=programme]{font-size:.875em;color:var(--waveline-muted,inherit)}' +
    '[part=status]{visibility:hidden}' +
    ':host([state=offline]) [part=status]{visibility:visible;color:var(--waveline-offline,inherit)}' +
    ':host([state=offline]) .text>:not([part=status]),:host([state=offline]) .art{opacity:.55}';

  var HTML =
    '<section part="container">' +
    '<div class="art"><img part="artwork" alt="" hidden decoding="async" referrerpolicy="no-referrer"></div>' +
    '<div class="text">' +
    '<div aria-live="polite" aria-atomic="true">' +
    '<p part="label"></p><p part="title"></p><p part="artist"></p><p part="programme"></p>' +
    '</div>' +
    '<p part="status" role="status">Offline · reconnecting</p>' +
    '</div></section>';

  function part(root, name) { return root.querySelector('[part=' + name + ']'); }
  function names(presenters) {
    var list = (presenters || []).map(function (p) { return p.title; }).filter(Boolean);
    return list.length < 2 ? list.join('') : list.slice(0, -1).join(', ') + ' & ' + list[list.length - 1];
  }

  class WavelineNowPlaying extends HTMLElement {
    static get observedAttributes() { return ['station', 'feed', 'stream']; }
    constructor() {
      super();
      var root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<style>' + CSS + '</style>' + HTML;
      this._root = root;
      this._rows = {};
      this._attempt = 0;
      this._timers = {};
      var img = part(root, 'artwork');
      img.addEventListener('error', function () { img.hidden = true; }); // a broken cover leaves the placeholder
    }
  }

  var proto = WavelineNowPlaying.prototype;

  proto.connectedCallback = function () {
    this._started = true;
    if (!this.hasAttribute('state')) this.setAttribute('state', 'connecting');
    var container = part(this._root, 'container');
    if (!container.hasAttribute('aria-label')) container.setAttribute('aria-label', this.getAttribute('label') || 'Now playing');
    this._render();
    this._open();
    var self = this;
    this._online = function () { if (!self._es) { self._later('retry', 0, function () { self._open(); }); } };
    window.addEventListener('online', this._online);
  };

  proto.disconnectedCallback = function () {
    this._started = false;
    window.removeEventListener('online', this._online);
    for (var key in this._timers) clearTimeout(this._timers[key]);
    this._timers = {};
    var es = this._es;
    this._es = null;
    if (es) es.close();
  };

  proto.attributeChangedCallback = function (name, before, after) {
    if (before === after || !this._started) return;
    this.disconnectedCallback();
    this._rows = {};
    this._cursor = null;
    this.connectedCallback();
  };

  proto._later = function (name, ms, fn) {
    clearTimeout(this._timers[name]);
    this._timers[name] = setTimeout(fn, ms);
  };

  // Server-Sent Events: the browser reconnects by itself (after 3 s, the stream's `retry:`) sending
  // Last-Event-ID, and the feed sends only what changed meanwhile: a page that slept gets what it missed.
  proto._open = function () {
    var station = this.getAttribute('station');
    var feed = (this.getAttribute('feed') || FEED).replace(/\/+$/, '').replace(/^ws(s?):/, 'http$1:');
    if (!station || feed.indexOf('__') === 0) return this._offline();
    var self = this;
    this._channel = 'stations.' + station + '.feed';
    this._station = station;
    var url = feed + '/v1/realtime/sse?channels[]=' + encodeURIComponent(this._channel);
    // Listener time: the track as this stream's listeners hear it (its latency behind the studio).
    if (this.getAttribute('stream')) url += '&stream=' + encodeURIComponent(this.getAttribute('stream'));
    // A stream of our own making (after the browser gave up): resume from the last cursor we kept.
    if (this._cursor) url += '&lastEventId=' + encodeURIComponent(this._cursor);
    var es = new EventSource(url);
    this._es = es;
    es.onopen = function () {
      if (self._es !== es) return;
      self._attempt = 0;
      clearTimeout(self._timers.offline);
      self.setAttribute('state', 'live');
    };
    es.onmessage = function (message) {
      if (self._es !== es) return;
      var frame;
      try { frame = JSON.parse(message.data); } catch (e) { return; }
      if (frame.data && frame.data.cursor) self._cursor = frame.data.cursor;
      if (frame.type === 'reset') self._rows = {}; // the channel's whole state follows
      else if (frame.type === 'synced') self._render();
      else if (frame.type === 'event') self._event(frame.data);
    };
    es.onerror = function () {
      if (self._es !== es) return;
      if (es.readyState !== 2) return self._reconnect(0); // the browser reconnects by itself
      // Closed for good: the gateway answered an error status (a refused station, or unavailable).
      self._es = null;
      self._reconnect(Math.min(MAX_BACKOFF_MS, 5000 * Math.pow(2, self._attempt)) * (0.75 + Math.random() / 4));
    };
  };

  proto._event = function (data) {
    if (!data || !data.channels || data.channels.indexOf(this._channel) < 0) return;
    var row = data.payload;
    if (!row || row.station_id !== this._station) return;
    if (row.kind !== 'now-playing' && row.kind !== 'on-air' && row.kind !== 'schedule') return;
    var action = data.events[0].slice(data.events[0].lastIndexOf('.') + 1);
    var value = null;
    if (action !== 'delete') {
      try { value = JSON.parse(row.data_json).data; } catch (e) { return; }
    }
    this._rows[row.kind] = value ? { data: value, at: Date.now() } : null;
    var self = this;
    this._later('render', RENDER_DELAY_MS, function () { self._render(); });
  };

  proto._reconnect = function (delay) {
    var self = this;
    if (delay) {
      this._attempt++;
      this._later('retry', delay, function () { if (self.isConnected && !self._es) self._open(); });
    }
    if (this.getAttribute('state') !== 'offline') {
      this.setAttribute('state', 'connecting');
      this._later('offline', delay ? 0 : OFFLINE_AFTER_MS, function () { self._offline(); });
    }
  };

  proto._offline = function () {
    this.setAttribute('state', 'offline');
    this._render(); // "Connecting…" gives way to the fallback title (a refusal can close before the first render)
  };

  /** The track while the feed says it is fresh, counting its age on in this browser (no clock skew). */
  proto._track = function () {
    var row = this._rows['now-playing'];
    var np = row && row.data;
    var track = np && np.track;
    var f = np && np.freshness;
    if (!track || track.isPlaying === false || !track.title || !f || f.status !== 'fresh') return null;
    if (f.thresholdSeconds != null) {
      var left = (f.thresholdSeconds - (f.ageSeconds || 0) + 1) * 1000 - (Date.now() - row.at);
      if (left <= 0) return null;
      var self = this;
      this._later('stale', left, function () { self._render(); });
    }
    return track;
  };

  proto._render = function () {
    var root = this._root;
    var onAir = this._rows['on-air'] && this._rows['on-air'].data;
    var schedule = this._rows.schedule && this._rows.schedule.data;
    var broadcast = onAir && onAir.broadcast;
    var programme = broadcast ? (broadcast.program && broadcast.program.title) || broadcast.title : '';
    var presenters = '';
    if (broadcast && schedule && schedule.broadcasts) {
      for (var i = 0; i < schedule.broadcasts.length; i++) {
        if (schedule.broadcasts[i].id === broadcast.id) presenters = names(schedule.broadcasts[i].presenters);
      }
    }
    var track = this._track();
    var lines;
    if (track) {
      lines = ['Now playing', track.title, track.artist || '', programme ? programme + (presenters ? ' · with ' + presenters : '') : ''];
    } else if (programme) {
      lines = ['On air', programme, presenters ? 'with ' + presenters : '', ''];
    } else {
      lines = ['On air', this.getAttribute('fallback') || (this.getAttribute('state') !== 'connecting' ? 'Live radio' : 'Connecting…'), '', ''];
    }
    var ids = ['label', 'title', 'artist', 'programme'];
    for (var j = 0; j < ids.length; j++) {
      var el = part(root, ids[j]);
      if (el.textContent !== lines[j]) el.textContent = lines[j];
    }
    this.setAttribute('mode', track ? 'track' : programme ? 'programme' : 'idle');
    var img = part(root, 'artwork');
    var art = track && /^https:\/\//.test(track.artworkUrl || '') ? track.artworkUrl : '';
    if (art) {
      img.alt = 'Cover of “' + track.title + '”' + (track.artist ? ' by ' + track.artist : '');
      if (img.getAttribute('src') !== art) img.src = art;
      img.hidden = false;
    } else {
      img.hidden = true;
      img.removeAttribute('src');
      img.alt = '';
    }
  };

  customElements.define(TAG, WavelineNowPlaying);

  var script = document.currentScript;
  if (script && script.dataset.station) {
    var box = document.createElement(TAG);
    box.setAttribute('station', script.dataset.station);
    if (script.dataset.feed) box.setAttribute('feed', script.dataset.feed);
    if (script.dataset.stream) box.setAttribute('stream', script.dataset.stream);
    if (script.dataset.label) box.setAttribute('label', script.dataset.label);
    script.parentNode.insertBefore(box, script.nextSibling);
  }
})();
