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

# --- deps: a virtualenv with the dependencies (and what building the bot needs) ---------------
FROM ${BASE} AS deps
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/venv
# Rebuilt only when the list changes (not on a change of the code, nor of pyproject.toml's
# other tables). The test suites numpy, scipy and scikit-learn ship are removed: nothing runs them.
COPY --from=requirements /tmp/requirements.txt /tmp/requirements.txt
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    /opt/venv/bin/pip install -q -r /tmp/requirements.txt "setuptools>=68" wheel \
    && find /opt/venv/lib/python3*/site-packages/numpy /opt/venv/lib/python3*/site-packages/scipy \
        /opt/venv/lib/python3*/site-packages/sklearn -depth -type d -name tests -exec rm -rf {} +

# --- app: the bot itself, in /opt/app (its own small layer in the image) ------------------------
FROM deps AS app
WORKDIR /src
COPY pyproject.toml README.md settings.py ./
COPY prompts ./prompts
COPY handlers ./handlers
COPY bot ./bot
RUN /opt/venv/bin/pip install -q --no-deps --no-build-isolation --target /opt/app .

# --- runtime-deps: the virtualenv without pip and setuptools, finding /opt/app ----------------
FROM deps AS runtime-deps
RUN /opt/venv/bin/pip uninstall -q -y pip setuptools wheel \
    && /opt/venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/purelib \
    && echo /opt/app > "$(cat /tmp/purelib)/digest-bot-app.pth"

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
# The dependencies (a layer reused until they change), then the bot (a small one).
COPY --from=runtime-deps /opt/venv /opt/venv
COPY --from=app /opt/app /opt/app
ENV PATH=/opt/venv/bin:/opt/app/bin:$PATH \
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
