"""``wordsplit playground``: the tokenizer playground page (wasm/playground/) on 127.0.0.1, or
written out as static files for any web host.

    wordsplit playground                 # http://127.0.0.1:8765/
    wordsplit playground --port 0        # any free port (printed)
    wordsplit playground --export site/  # index.html, app.js, ..., vocabs/*.tiktoken

The page runs the WebAssembly module (wasm/dist/, made by ``bash wasm/build.sh``) in the
browser; this command serves it with the bundled vocabulary files, gunzipped on the fly. The
module and the page live in a wordsplit source checkout, next to ``src/``: a command run from
an installed wheel without them says how to get them rather than serving a broken page.

>>> sorted(site_files(Path("/w")))[:2]
['app.js', 'index.html']
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..errors import BackendUnavailableError

CHECKOUT = Path(__file__).resolve().parents[3]
VOCAB_DATA = Path(__file__).resolve().parents[1] / "vocabs" / "data"
PAGE_FILES = ["index.html", "style.css", "app.js", "worker.js"]
MODULE_FILES = ["wordsplit.js", "wordsplit.wasm"]
TYPES = {".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css",
         ".html": "text/html; charset=utf-8", ".tiktoken": "application/octet-stream"}


def site_files(checkout: Path) -> dict[str, Path]:
    """The site's files (the page, the module) by URL path, from a checkout's ``wasm/``."""
    files = {name: checkout / "wasm" / "playground" / name for name in PAGE_FILES}
    files.update({name: checkout / "wasm" / "dist" / name for name in MODULE_FILES})
    return files


def vocab_files() -> dict[str, Path]:
    """``vocabs/<name>.tiktoken`` -> the bundled ``<name>.tiktoken.gz``."""
    return {f"vocabs/{path.name[:-3]}": path for path in sorted(VOCAB_DATA.glob("*.tiktoken.gz"))}


def checked_site(checkout: Path = CHECKOUT) -> dict[str, Path]:
    """:func:`site_files`, refusing when the module is not built."""
    files = site_files(checkout)
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        raise BackendUnavailableError(
            f"the playground needs the WebAssembly module and page ({', '.join(missing)} missing): "
            "in a wordsplit source checkout run `bash wasm/build.sh`, then `wordsplit playground` again")
    return files


class PlaygroundHandler(SimpleHTTPRequestHandler):
    """Serves the site's files and the gunzipped vocabularies; nothing else (no listing)."""

    def __init__(self, *args, files: dict[str, Path], **kwargs):
        self.files = files
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_file(head_only=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_file(head_only=True)

    def send_file(self, head_only: bool) -> None:
        name = self.path.split("?", 1)[0].lstrip("/") or "index.html"
        vocabs = vocab_files()
        if name in vocabs:
            body = gzip.decompress(vocabs[name].read_bytes())
        elif name in self.files:
            body = self.files[name].read_bytes()
        else:
            self.send_error(HTTPStatus.NOT_FOUND, f"no {name} in the playground")
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", TYPES.get(Path(name).suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet: one line per request is noise
        pass


def serve(port: int, files: dict[str, Path], ready=None) -> None:
    """Serve the playground on 127.0.0.1:``port`` until interrupted (``ready(url)`` once bound)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(PlaygroundHandler, files=files))
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    (ready or (lambda u: print(f"wordsplit playground: {u}  (Ctrl-C stops it)", flush=True)))(url)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def export(out: Path, files: dict[str, Path]) -> list[Path]:
    """Write the site as static files under ``out``; returns the files written."""
    written = []
    for name, path in files.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        written.append(target)
    for name, path in vocab_files().items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress(path.read_bytes()))
        written.append(target)
    return written


def cmd_playground(args: argparse.Namespace) -> None:
    files = checked_site()
    if args.export:
        written = export(Path(args.export), files)
        print(f"wordsplit playground: wrote {len(written)} files to {args.export} (serve it with any web server)")
        return
    serve(args.port, files)


def _port(value: str) -> int:
    port = int(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0..65535; 0 picks a free one)")
    return port


def register(sub) -> None:
    p = sub.add_parser("playground", help="the tokenizer playground in a browser (WebAssembly), on 127.0.0.1",
                       epilog="example: wordsplit playground --port 8765, or --export site/")
    p.add_argument("--port", type=_port, default=8765, help="the port on 127.0.0.1 (default 8765; 0: any free one)")
    p.add_argument("--export", metavar="DIR", default=None,
                   help="write the page, the module and the vocabulary files to DIR instead of serving")
    p.set_defaults(func=cmd_playground)

