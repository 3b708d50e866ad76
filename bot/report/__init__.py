"""The report page: every digest's full report as server-rendered HTML behind a signed link.

  archive.py   keeps a digest's data in Redis under a random report id, for REPORT_LINK_TTL
  signing.py   HMAC-SHA256 over (report id, expiry); the key from REPORT_SIGNING_KEY or Redis
  page.py      the digest → HTML (Jinja2 templates in templates/, autoescaped), phone-first CSS
  service.py   `Reports`: publish a digest and get its link; answer a request for a page

The web layer (handlers/web.py) only turns `Reports.respond` into an HTTP response.
"""

from .service import Reports, Response

__all__ = ["Reports", "Response"]
