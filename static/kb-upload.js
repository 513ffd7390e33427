// Upload form with a real progress bar: the same multipart POST as the plain
// form, sent with XMLHttpRequest so upload.onprogress can report the bytes sent.
// Without JavaScript the form posts normally and the server redirects.
// Files or a whole folder dropped on the form are sent the same way, each file with its
// path inside the folder (field "path", in the same order), so hosts keep their folders.
(function () {
  "use strict";

  var form = document.getElementById("upload-form");
  if (!form || !window.XMLHttpRequest || !window.FormData) { return; }

  var input = form.querySelector("input[type=file]");
  var folder = document.getElementById("upload-folder");
  var button = form.querySelector("button[type=submit]");
  var meter = document.getElementById("upload-meter");
  var bar = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");
  var error = document.getElementById("upload-error");

  var dropped = [];                     // [{file, path}] from a drop; empty: use the input
  var hint = document.getElementById("upload-drop");
  if (hint) { hint.hidden = false; }

  function mib(n) { return (n / 1048576).toFixed(1) + " MiB"; }

  // A dropped folder arrives as directory entries: walk them (readEntries gives at most
  // 100 entries per call, so call it until it gives none).
  function walk(entry, prefix, done) {
    if (entry.isFile) {
      entry.file(function (file) { dropped.push({file: file, path: prefix + file.name}); done(); },
                 function () { done(); });
      return;
    }
    var reader = entry.createReader();
    var pending = 1;
    function finish() { pending -= 1; if (pending === 0) { done(); } }
    (function more() {
      reader.readEntries(function (entries) {
        if (!entries.length) { finish(); return; }
        entries.forEach(function (child) { pending += 1; walk(child, prefix + entry.name + "/", finish); });
        more();
      }, finish);
    })();
  }

  form.addEventListener("dragover", function (event) { event.preventDefault(); });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    var items = event.dataTransfer.items;
    var entries = [];
    for (var i = 0; items && i < items.length; i++) {
      var entry = items[i].webkitGetAsEntry && items[i].webkitGetAsEntry();
      if (entry) { entries.push(entry); }
    }
    dropped = [];
    function ready() {
      status.textContent = dropped.length + " file(s) dropped; press the button to upload.";
      meter.hidden = false;
      bar.value = 0;
    }
    if (!entries.length) {              // no directory API (or files made by a script): plain files
      Array.prototype.forEach.call(event.dataTransfer.files || [], function (f) { dropped.push({file: f, path: ""}); });
      if (dropped.length) { ready(); }
      return;
    }
    var pending = entries.length;
    entries.forEach(function (entry) {
      walk(entry, "", function () {
        pending -= 1;
        if (pending === 0) { ready(); }
      });
    });
  });

  function chosen() {
    if (dropped.length) { return dropped; }
    var files = Array.prototype.map.call(input.files || [], function (f) { return {file: f, path: ""}; });
    Array.prototype.forEach.call((folder && folder.files) || [], function (f) {
      files.push({file: f, path: f.webkitRelativePath || ""});   // "prod2-logs/dn1/app.log"
    });
    return files;
  }

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    meter.hidden = true;
    button.disabled = false;
  }

  form.addEventListener("submit", function (event) {
    var files = chosen();
    if (!files.length) { return; }      // nothing chosen: the server says "This field is required"
    event.preventDefault();
    error.hidden = true;
    var max = parseInt(form.getAttribute("data-max-bytes"), 10);
    var total = files.reduce(function (n, f) { return n + f.file.size; }, 0);
    if (max && total > max) {
      fail((files.length > 1 ? "These files are " : "This file is ") + mib(total) + ", over the limit of " +
           form.getAttribute("data-max-human") + ".");
      return;
    }
    var body = new FormData();
    body.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    files.forEach(function (f) { body.append(input.name, f.file); body.append("path", f.path); });
    var healthy = form.querySelector("[name=healthy]");
    if (healthy && healthy.checked) { body.append("healthy", "on"); }

    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    xhr.setRequestHeader("X-CSRFToken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    xhr.upload.onprogress = function (e) {
      if (!e.lengthComputable) { return; }
      bar.value = Math.floor(100 * e.loaded / e.total);
      status.textContent = mib(e.loaded) + " of " + mib(e.total);
    };
    xhr.upload.onload = function () { status.textContent = "Uploaded; storing…"; };
    xhr.onload = function () {
      var data = null;
      try { data = JSON.parse(xhr.responseText); } catch (e) { data = null; }
      if (xhr.status === 200 && data && data.redirect) {
        window.location.assign(data.redirect);
        return;
      }
      fail((data && data.error) || ("The upload failed (HTTP " + xhr.status + ")."));
    };
    xhr.onerror = function () { fail("The upload was interrupted (network error). Try again."); };

    button.disabled = true;
    meter.hidden = false;
    bar.value = 0;
    status.textContent = "Starting…";
    xhr.send(body);
  });
})();
