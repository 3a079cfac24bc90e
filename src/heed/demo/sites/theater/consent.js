// Cookie consent dialog: shows the banner and, after consent, loads analytics (WANNADO-08: a bot never runs this).
(function () {
  var banner = document.getElementById("cookie-consent");
  if (banner && document.cookie.indexOf("consent=") === -1) { banner.hidden = false; }
})();
