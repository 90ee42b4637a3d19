"""A throwaway nginx for the tests: Debian's `nginx` running one site file, wrapped in a minimal
main config of its own (pid, logs and temp files in a temp folder), in the foreground
(`daemon off;`) as the test's child, stopped at the end.

Run as root, nginx's workers switch to `nobody`: the temp folder is made readable to them rather
than the workers being kept as root. Not installed: the tests skip, saying how to get it; under
CI (the `CI` variable) they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile

from tests.helpers.installed import installed
from tests.helpers.programs import end, wait_ready

INSTALL_HINT = "nginx is not installed: apt-get install nginx (Debian/Ubuntu)"

MAIN = """\
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{}}
http {{
    access_log {root}/access.log;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    include {root}/site.conf;
}}
"""


def nginx_binary() -> str:
    """Where nginx is (often /usr/sbin, off a user's PATH); else skip, or fail under CI."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return installed(shutil.which("nginx", path=path), INSTALL_HINT, "nginx")


class NginxServer:
    def __init__(self, binary: str, site: str, port: int) -> None:
        """*site*: the text of a file `http {}` includes, listening on 127.0.0.1:*port*."""
        self.binary, self.port = binary, port
        self.root = tempfile.mkdtemp(prefix="bench-nginx-")
        os.chmod(self.root, 0o755)  # as root, the workers (nobody) open the temp folders in it
        with open(os.path.join(self.root, "site.conf"), "w") as file:
            file.write(site)
        with open(os.path.join(self.root, "nginx.conf"), "w") as file:
            file.write(MAIN.format(root=self.root))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> NginxServer:
        conf, log = os.path.join(self.root, "nginx.conf"), os.path.join(self.root, "error.log")
        self.proc = subprocess.Popen(
            [self.binary, "-p", self.root, "-c", conf, "-e", log],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_ready(self.proc, self._listening, "nginx", self.log)
        return self

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def log(self) -> str:
        try:
            with open(os.path.join(self.root, "error.log"), errors="replace") as file:
                return file.read()[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM (nginx's fast shutdown), then the folder goes."""
        end(self.proc)
        self.proc = None
        shutil.rmtree(self.root, ignore_errors=True)
