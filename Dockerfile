# syntax=docker/dockerfile:1
# The bot's image: one image, one process per container (`serve` by default; `worker`, `clock`,
# `run` or any CLI command as its arguments). docs/deploy.md says how to build and run it;
# tests/deploy/test_containers.py builds it (on a Debian-built base) and runs every process.
#
#   docker build -t digest-bot .
#   docker run --rm digest-bot --version
#
# Behind a TLS-intercepting proxy, hand the build your CA bundle (it is never stored in a layer):
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t digest-bot .
ARG BASE=python:3.12-slim

# --- the dependencies pyproject.toml names, as a requirements list --------------------------------
FROM ${BASE} AS requirements
COPY pyproject.toml /tmp/
RUN python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt

# --- build: a virtualenv with the bot and its dependencies (pip and its caches stay here) ------
FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
RUN python3 -m venv /opt/venv
# The dependencies first: this layer is rebuilt only when the list changes (not on a change of
# the code, nor of pyproject.toml's other tables).
COPY --from=requirements /tmp/requirements.txt /tmp/requirements.txt
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    /opt/venv/bin/pip install -q -r /tmp/requirements.txt
COPY pyproject.toml ./
COPY README.md settings.py ./
COPY prompts ./prompts
COPY handlers ./handlers
COPY bot ./bot
# The bot itself; then what only installing needs (pip, setuptools) and the test suites the
# numeric libraries ship are removed: nothing in the final image runs them.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    /opt/venv/bin/pip install -q --no-deps . \
    && /opt/venv/bin/pip uninstall -q -y pip setuptools wheel \
    && find /opt/venv/lib/python3*/site-packages/numpy /opt/venv/lib/python3*/site-packages/scipy \
        /opt/venv/lib/python3*/site-packages/sklearn -depth -type d -name tests -exec rm -rf {} +

# --- the image: the base, git and an init, the virtualenv; a non-root user --------------------
FROM ${BASE}
# git: local repositories and fork mirrors are read with it. tini: PID 1 forwards the stop signal
# and reaps orphans (the embedded Redis of `run`), so a container stops in under a second instead
# of waiting out the runtime's grace period.
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git tini >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log \
    # Repositories are bind-mounted from the host, owned by another uid: the container has one
    # user, so git's guard against other users' repositories (safe.directory) has no one to guard.
    && git config --system safe.directory '*' \
    && groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid bot --home-dir /data --no-create-home --shell /usr/sbin/nologin bot \
    && mkdir -p /data /app && chown bot:bot /data
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    DATA_DIR=/data \
    HOME=/data \
    HOST=0.0.0.0 \
    PORT=3000
USER 10001:10001
WORKDIR /app
VOLUME ["/data"]
EXPOSE 3000
# The process's own /healthz: the operations server's when METRICS_PORT is set (worker, clock:
# is this process polling / ticking, and does Redis answer), else the public one on PORT (serve,
# run: does Redis answer). No curl in the image: Python asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; p = os.environ.get('METRICS_PORT') or '0'; u.urlopen('http://127.0.0.1:%s/healthz' % (p if p != '0' else os.environ.get('PORT', '3000')), timeout=4)"]
ENTRYPOINT ["tini", "--", "python", "-m", "bot"]
CMD ["serve"]
