// Renders the case list into #root. A crawler that runs no JavaScript sees an empty page.
(function () {
  fetch("/api/saker", { headers: { Accept: "application/json" } })
    .then(function (r) { return r.json(); })
    .then(function (data) {
      var root = document.getElementById("root");
      var list = document.createElement("ul");
      data.saker.forEach(function (sak) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = "/app/sak/" + sak.slug + "/";
        a.textContent = sak.tittel;
        li.appendChild(a);
        list.appendChild(li);
      });
      root.appendChild(list);
    });
})();
