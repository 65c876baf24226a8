"""The site's root, and the checks that run before anything is built.

    python -m tools.site check [--site-url URL] [--repo-url URL] en zh_CN
    python -m tools.site root --out _build/html [--site-url URL] en zh_CN

``check`` stops the build with one error when a language code is unknown,
SITE_URL is not an address the site can be published at, or REPO_URL is not
a GitHub repository's (ext/pages/repository.py). ``root`` writes the
landing page, index.html, and with SITE_URL the sitemap index beside it.

The landing page
The page picks the first of the browser's preferred languages that the site
has (else the first listed), and lists every language for a reader without
JavaScript. Its links and its redirect are relative, so the site works under
any folder; given the site's address (``SITE_URL``, ext/pages/publishing.py), it
also names itself and its alternates by their absolute addresses, for search
engines.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path

from ext.pages.publishing import SiteURLError, site_url, sitemap_index
from ext.pages.repository import RepoURLError, repo_url
from ext.translation.languages import LanguageError, check_language, display_name, hreflang


def landing_page(langs: list[str], address: str | None = None) -> str:
    """The root index.html: the reader's language if we have it, else the first.

    *address* is the site's (SITE_URL), for a canonical link and absolute alternates.
    """
    base = html.escape(address or "")
    links = "\n".join(
        f'      <li><a href="{c}/index.html" hreflang="{hreflang(c)}" '
        f'lang="{hreflang(c)}">{html.escape(display_name(c))}</a></li>'
        for c in langs
    )
    alternates = "\n".join(
        f'  <link rel="alternate" hreflang="{hreflang(c)}" href="{base}{c}/index.html">'
        for c in langs
    )
    if address:
        alternates = f'  <link rel="canonical" href="{base}">\n' + alternates
    codes = json.dumps(langs)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Double backward in PyTorch · 二阶反向传播</title>
  <meta name="description" content="Lessons on PyTorch custom autograd Functions that support double backward · PyTorch 自定义自动微分 Function 的二阶反向传播课">
  <link rel="icon" href="{langs[0]}/_static/favicon.svg">
{alternates}
  <link rel="alternate" hreflang="x-default" href="{base}{langs[0]}/index.html">
  <script>
  (function () {{
    var codes = {codes};
    var wanted = navigator.languages || [navigator.language || ""];
    function pick() {{
      for (var i = 0; i < wanted.length; i++) {{
        var w = String(wanted[i]).toLowerCase().replace("_", "-");
        for (var j = 0; j < codes.length; j++) {{
          var c = codes[j].toLowerCase().replace("_", "-");
          if (w === c) return codes[j];
        }}
        for (var k = 0; k < codes.length; k++) {{
          if (w.split("-")[0] === codes[k].toLowerCase().split("_")[0]) return codes[k];
        }}
      }}
      return codes[0];
    }}
    location.replace(pick() + "/index.html" + location.hash);
  }})();
  </script>
  <style>
    body {{ font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; }}
    a {{ font-size: 1.25rem; }}
  </style>
</head>
<body>
  <main>
    <h1>Double backward in PyTorch</h1>
    <p>Choose a language · 选择语言:</p>
    <ul>
{links}
    </ul>
  </main>
</body>
</html>
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.site", description=__doc__.splitlines()[0]
    )
    parser.add_argument("command", choices=["check", "root"])
    parser.add_argument("--out", type=Path, help="root: the folder of the built site")
    parser.add_argument("--site-url", help="the site's address (SITE_URL)")
    parser.add_argument("--repo-url", help="check: the repository's address (REPO_URL)")
    parser.add_argument("langs", nargs="+")
    args = parser.parse_args(argv)
    try:
        for code in args.langs:
            check_language(code, need_catalogs=False)
        address = site_url(args.site_url) if args.site_url else None
        if args.repo_url:
            repo_url(args.repo_url)
    except (LanguageError, SiteURLError, RepoURLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.command == "root":
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "index.html").write_text(landing_page(args.langs, address), encoding="utf-8")
        sitemap = args.out / "sitemap.xml"
        if address:
            sitemap.write_text(sitemap_index(address, args.langs), encoding="utf-8")
        else:
            sitemap.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
