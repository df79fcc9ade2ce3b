// rules.js checks a rule as you type, through POST /rules/check: the
// pattern, then each example (must match, must not match) decided as saving
// will check it. The form works without it; this only gives earlier feedback.
(function () {
  "use strict";
  var csrf = document.body.dataset.csrf;
  var form = document.querySelector('[data-testid="rule-form"]');
  if (!form || !csrf) { return; }
  var pattern = form.querySelector('[data-check="pattern"]');
  var out = form.querySelector('[data-testid="pattern-check"]');
  var list = form.querySelector('[data-testid="examples-check"]');
  var fields = ["tools", "pattern", "action", "severity", "match_type", "examples_match", "examples_no_match"];
  var timer = null;

  function field(name) {
    var el = form.elements.namedItem(name);
    return el ? el.value : "";
  }

  function showExamples(examples) {
    if (!list) { return; }
    list.textContent = "";
    (examples || []).forEach(function (ex) {
      var li = document.createElement("li");
      li.className = "check-result " + (ex.ok ? "good" : "bad");
      var code = document.createElement("code");
      code.textContent = ex.value;
      li.appendChild(code);
      li.appendChild(document.createTextNode(" " + ex.message));
      li.dataset.ok = ex.ok ? "true" : "false";
      list.appendChild(li);
    });
  }

  function check() {
    if (!pattern.value.trim()) { out.textContent = ""; out.className = "check-result"; showExamples([]); return; }
    var body = new URLSearchParams();
    fields.forEach(function (name) { body.append(name, field(name)); });
    fetch("/rules/check", {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
      body: body
    }).then(function (r) { return r.json(); }).then(function (res) {
      out.textContent = res.message;
      out.className = "check-result " + (res.ok ? "good" : "bad");
      showExamples(res.examples);
    }).catch(function () { out.textContent = ""; });
  }

  function later() { clearTimeout(timer); timer = setTimeout(check, 250); }
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  if (pattern.value) { check(); }
})();
