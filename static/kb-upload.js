// Upload form with a real progress bar: the same multipart POST as the plain
// form, sent with XMLHttpRequest so upload.onprogress can report the bytes sent.
// Without JavaScript the form posts normally and the server redirects.
(function () {
  "use strict";

  var form = document.getElementById("upload-form");
  if (!form || !window.XMLHttpRequest || !window.FormData) { return; }

  var input = form.querySelector("input[type=file]");
  var button = form.querySelector("button[type=submit]");
  var meter = document.getElementById("upload-meter");
  var bar = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");
  var error = document.getElementById("upload-error");

  function mib(n) { return (n / 1048576).toFixed(1) + " MiB"; }

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    meter.hidden = true;
    button.disabled = false;
  }

  form.addEventListener("submit", function (event) {
    var file = input.files && input.files[0];
    if (!file) { return; }              // the browser's "required" check speaks
    event.preventDefault();
    error.hidden = true;
    var max = parseInt(form.getAttribute("data-max-bytes"), 10);
    if (max && file.size > max) {
      fail("This file is " + mib(file.size) + ", over the limit of " + form.getAttribute("data-max-human") + ".");
      return;
    }

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
    xhr.send(new FormData(form));
  });
})();
