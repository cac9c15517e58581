/*! Waveline studio inbox (docs/inbox.md, "The studio page"). The operator key is kept in this tab's
 * sessionStorage only and sent as `Authorization: Bearer`; never in a URL, a cookie or localStorage.
 * Listener text is shown with textContent only: a listener may send markup. */
(function () {
  'use strict';

  var STORAGE_KEY = 'waveline.studio.key';
  var STATION_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
  var POLICY_REFRESH_MS = 30000;
  var BAN_CONFIRM_MS = 4000;

  var $ = function (id) {
    return document.getElementById(id);
  };
  var form = $('connect');
  var stationInput = $('station');
  var keyInput = $('key');
  var list = $('messages');
  var empty = $('empty');
  var more = $('more');
  var live = $('live');
  var notice = $('notice');
  var showHidden = $('show-hidden');
  var banDays = $('ban-days');
  var template = $('message-template');
  var banTemplate = $('ban-template');
  var banList = $('bans');
  var banCount = $('ban-count');
  var noBans = $('no-bans');

  /** The connection: its station, key, abort and stream position; a new one makes the old one's work void. */
  var session = null;
  /** id → { message, el } */
  var shown = new Map();
  /** The bans in force: id → { id, client, expiresAt, createdAt } (GET …/bans, and this page's own changes). */
  var bans = new Map();
  /** client → how many bans in force name it. */
  var bannedClients = new Map();
  var policyTimer = null;

  function storedKey() {
    try {
      return sessionStorage.getItem(STORAGE_KEY) || '';
    } catch (err) {
      return '';
    }
  }

  function say(text, isError) {
    notice.textContent = text;
    notice.className = isError ? 'error' : '';
  }

  function setLive(state, text) {
    live.dataset.state = state;
    live.textContent = text;
  }

  // ---- the API ----

  function apiError(res, body) {
    var message = body && body.error && typeof body.error.message === 'string' ? body.error.message : 'HTTP ' + res.status;
    var err = new Error(message + ' (' + res.status + ')');
    err.status = res.status;
    return err;
  }

  async function api(s, method, path, json) {
    var headers = { authorization: 'Bearer ' + s.key, accept: 'application/json' };
    var init = { method: method, headers: headers, cache: 'no-store', signal: s.abort.signal };
    if (json !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(json);
    }
    var res = await fetch(s.base + path, init);
    var body = null;
    if (res.status !== 204) {
      try {
        body = await res.json();
      } catch (err) {
        body = null;
      }
    }
    if (!res.ok) throw apiError(res, body);
    return body;
  }

  function refused(err) {
    if (err.status === 401) {
      try {
        sessionStorage.removeItem(STORAGE_KEY);
      } catch (e) {
        /* nothing kept */
      }
      disconnect();
      say('The key was refused: paste it again.', true);
      return true;
    }
    return false;
  }

  // ---- messages on the page ----

  /** The time it came; with the date when that was not today. */
  function timeOf(iso) {
    var date = new Date(iso);
    var time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    if (date.toDateString() === new Date().toDateString()) return time;
    return date.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ', ' + time;
  }

  var STATUS_TEXT = { pending: 'new', held: 'held for review', shown: 'shown', answered: 'answered', hidden: 'hidden' };

  function render(entry) {
    var m = entry.message;
    var el = entry.el;
    var q = function (selector) {
      return el.querySelector(selector);
    };
    el.dataset.id = m.id;
    el.dataset.status = m.status;
    el.dataset.kind = m.kind;
    el.dataset.client = m.client;
    q('.kind').textContent = m.kind;
    q('.status').textContent = STATUS_TEXT[m.status] || m.status;
    var sender = [m.name, m.location].filter(function (part) {
      return part !== null && part !== '';
    });
    q('.sender').textContent = sender.length ? sender.join(', ') : 'anonymous';
    q('.received').textContent = timeOf(m.receivedAt);
    q('.received').setAttribute('datetime', m.receivedAt);
    q('.client').textContent = m.client;
    var banned = bannedClients.has(m.client);
    q('.banned').hidden = !banned;
    // A banned listener's messages offer to lift the ban instead.
    q('.ban').hidden = banned;
    q('.lift').hidden = !banned;
    q('.text').textContent = m.text === null ? '' : m.text;
    q('.text').hidden = m.text === null;
    var track = q('.track');
    track.hidden = m.track === null;
    if (m.track !== null) {
      q('.artist').textContent = m.track.artist;
      q('.title').textContent = m.track.title;
    }
    el.querySelectorAll('button[data-status]').forEach(function (button) {
      var current = button.dataset.status === m.status;
      button.setAttribute('aria-pressed', current ? 'true' : 'false');
      button.disabled = current;
    });
  }

  function newElement() {
    return template.content.firstElementChild.cloneNode(true);
  }

  /** Adds or updates a message (the later state wins: the list and the stream may both carry it). */
  function upsert(message) {
    var entry = shown.get(message.id);
    if (entry) {
      if (entry.message.updatedAt > message.updatedAt) return;
      var statusChanged = entry.message.status !== message.status;
      entry.message = message;
      render(entry);
      if (statusChanged) checkPolicy(entry);
    } else {
      entry = { message: message, el: newElement(), policyAt: 0 };
      shown.set(message.id, entry);
      render(entry);
      place(entry);
      checkPolicy(entry);
    }
    empty.hidden = true;
    countNew();
  }

  /** Newest first by the time it was received. */
  function place(entry) {
    var at = entry.message.receivedAt;
    var children = list.children;
    for (var i = 0; i < children.length; i++) {
      var other = shown.get(children[i].dataset.id);
      if (other && (other.message.receivedAt < at || (other.message.receivedAt === at && other.message.id < entry.message.id))) {
        list.insertBefore(entry.el, children[i]);
        return;
      }
    }
    list.appendChild(entry.el);
  }

  function countNew() {
    var n = 0;
    shown.forEach(function (entry) {
      if (entry.message.status === 'pending' || entry.message.status === 'held') n++;
    });
    document.title = (n ? '(' + n + ') ' : '') + 'Studio inbox · Waveline';
  }

  function clearMessages() {
    shown.clear();
    setBans([]);
    list.textContent = '';
    more.hidden = true;
    empty.hidden = false;
    document.title = 'Studio inbox · Waveline';
  }

  // ---- the request policy ----

  function minutes(seconds) {
    var m = Math.ceil(seconds / 60);
    if (m < 60) return m + ' min';
    return Math.floor(m / 60) + ' h' + (m % 60 ? ' ' + (m % 60) + ' min' : '');
  }

  function verdictText(verdict) {
    if (verdict.requestable) return 'allowed now';
    var later = verdict.retryAfterSeconds ? ' · allowed in ' + minutes(verdict.retryAfterSeconds) : '';
    if (verdict.reason === 'recently-played') return 'played too recently' + later;
    if (verdict.reason === 'artist-recently-played') return 'artist played too recently' + later;
    if (verdict.reason === 'already-requested') return 'another request for it is waiting';
    return 'not allowed now' + later;
  }

  /** A waiting request shows whether the policy would take it now (asked again every 30 s). */
  var policyQueue = [];
  var policyBusy = false;

  function checkPolicy(entry) {
    var m = entry.message;
    var policy = entry.el.querySelector('.policy');
    if (m.kind !== 'request' || m.status === 'answered' || m.status === 'hidden') {
      policy.textContent = '';
      policy.dataset.state = 'unknown';
      return;
    }
    if (policyQueue.indexOf(entry) < 0) policyQueue.push(entry);
    void drainPolicy();
  }

  async function drainPolicy() {
    if (policyBusy) return;
    policyBusy = true;
    try {
      while (policyQueue.length && session) {
        var entry = policyQueue.shift();
        var s = session;
        if (shown.get(entry.message.id) !== entry) continue;
        try {
          var verdict = await api(s, 'GET', '/messages/' + encodeURIComponent(entry.message.id) + '/policy');
          if (s !== session) break;
          var policy = entry.el.querySelector('.policy');
          policy.textContent = verdictText(verdict);
          policy.dataset.state = verdict.requestable ? 'allowed' : 'refused';
          entry.policyAt = Date.now();
        } catch (err) {
          if (s !== session || err.name === 'AbortError') break;
          if (refused(err)) break;
        }
      }
    } finally {
      policyBusy = false;
    }
  }

  /** Every 5 s: the requests whose verdict is 30 s old, and the bans (another desk may have banned someone). */
  var ticks = 0;
  function refresh() {
    if (session && ++ticks % 6 === 0) void loadBans(session);
    shown.forEach(function (entry) {
      if (entry.message.kind === 'request' && Date.now() - entry.policyAt >= POLICY_REFRESH_MS) checkPolicy(entry);
    });
  }

  // ---- the studio stream (fetch + a stream reader: EventSource cannot send the key) ----

  function sleep(ms, signal) {
    return new Promise(function (resolve) {
      var timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', function () {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Parses Server-Sent Events from a text stream, calling `dispatch(type, data, id)` for each event. */
  async function readEvents(s, body, dispatch) {
    var reader = body.pipeThrough(new TextDecoderStream()).getReader();
    var buffer = '';
    var data = [];
    var type = '';
    var hasData = false;
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) return;
      buffer += chunk.value;
      // A \r at the very end may be the first half of \r\n: keep it for the next chunk.
      var hold = buffer.charAt(buffer.length - 1) === '\r';
      var lines = (hold ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      buffer = lines.pop() + (hold ? '\r' : '');
      for (var i = 0; i < lines.length; i++) {
        var line = lines[i];
        if (line === '') {
          if (hasData) dispatch(type || 'message', data.join('\n'), s.lastEventId);
          data = [];
          type = '';
          hasData = false;
          continue;
        }
        if (line.charAt(0) === ':') continue;
        var colon = line.indexOf(':');
        var field = colon < 0 ? line : line.slice(0, colon);
        var value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.charAt(0) === ' ') value = value.slice(1);
        if (field === 'data') {
          data.push(value);
          hasData = true;
        } else if (field === 'event') type = value;
        else if (field === 'id') {
          if (value.indexOf('\u0000') < 0) s.lastEventId = value;
        } else if (field === 'retry' && /^\d+$/.test(value)) s.retryMs = Number(value);
      }
    }
  }

  async function stream(s) {
    var first = true;
    while (s === session) {
      var headers = { authorization: 'Bearer ' + s.key, accept: 'text/event-stream' };
      if (s.lastEventId !== null) headers['last-event-id'] = s.lastEventId;
      try {
        setLive('connecting', first ? 'Connecting…' : 'Reconnecting…');
        var res = await fetch(s.base + '/stream', { headers: headers, cache: 'no-store', signal: s.abort.signal });
        if (!res.ok) {
          var body = null;
          try {
            body = await res.json();
          } catch (err) {
            body = null;
          }
          var err = apiError(res, body);
          if (refused(err)) return;
          if (res.status === 403 || res.status === 404) {
            say(err.message, true);
            setLive('off', 'Offline');
            return;
          }
          throw err;
        }
        await readEvents(s, res.body, function (type, data) {
          if (s !== session) return;
          if (type === 'message') {
            try {
              upsert(JSON.parse(data));
            } catch (err) {
              /* not a message: skip it */
            }
          } else if (type === 'ready') {
            setLive('live', 'Live');
            first = false;
            // The list once the stream is live (then every message is in one or the other); again after a
            // reconnect when it could not be loaded.
            if (!s.listed && !s.listing) void loadList(s, null);
          }
        });
      } catch (err) {
        if (s !== session) return;
      }
      if (s !== session) return;
      setLive('connecting', 'Reconnecting…');
      await sleep(s.retryMs, s.abort.signal);
    }
  }

  /** A page of the list (the newest first; `cursor` continues it). */
  async function loadList(s, cursor) {
    s.listing = true;
    try {
      var page = await api(s, 'GET', '/messages?limit=50' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      if (s !== session) return;
      page.messages.forEach(upsert);
      s.listed = true;
      s.cursor = page.nextCursor;
      more.hidden = page.nextCursor === null;
      if (shown.size === 0) {
        empty.textContent = 'No messages yet: new ones appear here as they arrive.';
        empty.hidden = false;
      }
    } catch (err) {
      if (s !== session || err.name === 'AbortError') return;
      if (!refused(err)) say('Could not load the list: ' + err.message, true);
    } finally {
      s.listing = false;
    }
  }

  // ---- bans ----

  /** Until when a ban runs, as the desk reads it. */
  function untilText(ban) {
    if (ban.expiresAt === null) return 'until lifted';
    var date = new Date(ban.expiresAt);
    return (
      'until ' +
      date.toLocaleDateString([], { month: 'short', day: 'numeric' }) +
      ', ' +
      date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    );
  }

  /** Replaces the bans in force (newest first, as the API lists them) and shows them. */
  function setBans(all) {
    bans = new Map();
    bannedClients = new Map();
    banList.textContent = '';
    all.forEach(function (ban) {
      bans.set(ban.id, ban);
      bannedClients.set(ban.client, (bannedClients.get(ban.client) || 0) + 1);
      var el = banTemplate.content.firstElementChild.cloneNode(true);
      el.dataset.id = ban.id;
      el.dataset.client = ban.client;
      el.querySelector('.client').textContent = ban.client;
      el.querySelector('.until').textContent = untilText(ban);
      banList.appendChild(el);
    });
    banCount.textContent = String(bans.size);
    noBans.hidden = bans.size > 0;
    shown.forEach(render);
  }

  function addBan(ban) {
    var all = [ban];
    bans.forEach(function (other) {
      if (other.id !== ban.id) all.push(other);
    });
    setBans(all);
  }

  /** Lifts the bans (ids) in force; the messages they hid stay hidden until the studio shows them. */
  async function lift(ids, client) {
    var s = session;
    if (!s || ids.length === 0) return;
    try {
      for (var i = 0; i < ids.length; i++) await api(s, 'DELETE', '/bans/' + encodeURIComponent(ids[i]));
      if (s !== session) return;
      var left = [];
      bans.forEach(function (ban) {
        if (ids.indexOf(ban.id) < 0) left.push(ban);
      });
      setBans(left);
      say('Ban on listener ' + client + ' lifted: what they send now arrives as anyone’s.', false);
    } catch (err) {
      if (s !== session || err.name === 'AbortError') return;
      if (!refused(err)) say('Could not lift the ban: ' + err.message, true);
      void loadBans(s);
    }
  }

  /** Every ban in force on a listener. */
  function bansOf(client) {
    var ids = [];
    bans.forEach(function (ban) {
      if (ban.client === client) ids.push(ban.id);
    });
    return ids;
  }

  async function loadBans(s) {
    try {
      var answer = await api(s, 'GET', '/bans');
      if (s !== session) return;
      setBans(answer.bans);
    } catch (err) {
      if (s !== session || err.name === 'AbortError') return;
      refused(err);
    }
  }

  // ---- connecting ----

  function disconnect() {
    if (session) session.abort.abort();
    session = null;
    if (policyTimer) clearInterval(policyTimer);
    policyTimer = null;
    policyQueue = [];
    clearMessages();
    setLive('off', 'Offline');
  }

  function connect() {
    var station = stationInput.value.trim();
    var key = storedKey();
    disconnect();
    if (!STATION_PATTERN.test(station)) {
      say('Enter the station id (st_…: letters, digits, _ and -).', true);
      return;
    }
    if (!key) {
      say('Paste the operator key.', true);
      return;
    }
    // The station (not a secret) stays in the address, so a bookmark opens this station's inbox.
    var url = new URL(location.href);
    url.search = '?station=' + encodeURIComponent(station);
    history.replaceState(null, '', url.pathname + url.search);
    session = {
      station: station,
      key: key,
      base: '/admin/v1/stations/' + encodeURIComponent(station) + '/inbox',
      abort: new AbortController(),
      lastEventId: null,
      retryMs: 3000,
      cursor: null,
      listed: false,
      listing: false,
    };
    keyInput.placeholder = 'key kept in this tab';
    empty.textContent = 'Connecting…';
    say('', false);
    void stream(session);
    void loadBans(session);
    policyTimer = setInterval(refresh, 5000);
  }

  // ---- the buttons ----

  async function setStatus(entry, status) {
    var s = session;
    if (!s) return;
    try {
      upsert(await api(s, 'PATCH', '/messages/' + encodeURIComponent(entry.message.id), { status: status }));
      say('', false);
    } catch (err) {
      if (s !== session || err.name === 'AbortError') return;
      if (!refused(err)) say('Could not set the message ' + status + ': ' + err.message, true);
    }
  }

  async function ban(entry, button) {
    var s = session;
    if (!s) return;
    if (!button.classList.contains('armed')) {
      button.classList.add('armed');
      button.textContent = 'Confirm ban';
      setTimeout(function () {
        button.classList.remove('armed');
        button.textContent = 'Ban';
      }, BAN_CONFIRM_MS);
      return;
    }
    button.classList.remove('armed');
    button.textContent = 'Ban';
    var days = banDays.value;
    try {
      var created = await api(
        s,
        'POST',
        '/bans',
        days ? { messageId: entry.message.id, days: Number(days) } : { messageId: entry.message.id },
      );
      if (s !== session) return;
      addBan(created);
      if (entry.message.status !== 'hidden') await setStatus(entry, 'hidden');
      say(
        'Listener ' +
          created.client +
          ' banned ' +
          (days ? 'for ' + banDays.selectedOptions[0].textContent : 'until lifted') +
          ': what they send now arrives hidden.',
        false,
      );
    } catch (err) {
      if (s !== session || err.name === 'AbortError') return;
      if (!refused(err)) say('Could not ban: ' + err.message, true);
    }
  }

  list.addEventListener('click', function (event) {
    var button = event.target.closest('button');
    if (!button) return;
    var item = button.closest('li.message');
    var entry = item && shown.get(item.dataset.id);
    if (!entry) return;
    if (button.dataset.status) void setStatus(entry, button.dataset.status);
    else if (button.classList.contains('ban')) void ban(entry, button);
    else if (button.classList.contains('lift')) void lift(bansOf(entry.message.client), entry.message.client);
  });

  banList.addEventListener('click', function (event) {
    var button = event.target.closest('button.lift');
    var item = button && button.closest('li.ban-entry');
    if (item && bans.has(item.dataset.id)) void lift([item.dataset.id], item.dataset.client);
  });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var key = keyInput.value.trim();
    keyInput.value = '';
    if (key) {
      try {
        sessionStorage.setItem(STORAGE_KEY, key);
      } catch (err) {
        say('This browser keeps nothing for the tab: the key cannot be kept.', true);
        return;
      }
    }
    connect();
  });

  $('forget').addEventListener('click', function () {
    try {
      sessionStorage.removeItem(STORAGE_KEY);
    } catch (err) {
      /* nothing kept */
    }
    disconnect();
    keyInput.placeholder = 'paste the key once';
    empty.textContent = 'The key is forgotten. Paste it again to connect.';
    say('', false);
  });

  more.addEventListener('click', function () {
    if (session && session.cursor) void loadList(session, session.cursor);
  });

  showHidden.addEventListener('change', function () {
    list.classList.toggle('show-hidden', showHidden.checked);
  });

  // ---- start ----

  var fromUrl = new URLSearchParams(location.search).get('station');
  if (fromUrl) stationInput.value = fromUrl;
  if (storedKey()) keyInput.placeholder = 'key kept in this tab';
  if (fromUrl && storedKey()) connect();
})();
