// rules.js checks a rule's pattern as you type, through POST /rules/check.
// The form works without it; this only gives earlier feedback.
(function () {
  "use strict";
  var csrf = document.body.dataset.csrf;
  var form = document.querySelector('[data-testid="rule-form"]');
  if (!form || !csrf) { return; }
  var pattern = form.querySelector('[data-check="pattern"]');
  var tools = form.querySelector('[data-check="tools"]');
  var out = form.querySelector('[data-testid="pattern-check"]');
  var timer = null;

  function check() {
    if (!pattern.value.trim()) { out.textContent = ""; out.className = "check-result"; return; }
    var body = new URLSearchParams({ tools: tools.value, pattern: pattern.value });
    fetch("/rules/check", {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
      body: body
    }).then(function (r) { return r.json(); }).then(function (res) {
      out.textContent = res.message;
      out.className = "check-result " + (res.ok ? "good" : "bad");
    }).catch(function () { out.textContent = ""; });
  }

  function later() { clearTimeout(timer); timer = setTimeout(check, 250); }
  pattern.addEventListener("input", later);
  tools.addEventListener("input", later);
  if (pattern.value) { check(); }
})();
