"""Our own labelled corpus for bot/redact/: hand-written lines in the forms credentials take
in code, configs, logs and command lines (every shape and the context forms of issue 12), and
hard negatives that must pass untouched.

Secrets are assembled at run time from a seeded generator and split prefixes, so this file holds
no string a secret scanner (or a push-protection rule) would flag.
"""

from __future__ import annotations

import base64
import random

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"
_ALNUM = _LOWER + _UPPER + _DIGITS
_HEXL = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def rnd(n: int, alphabet: str = _ALNUM, seed: int = 0) -> str:
    """n characters from `alphabet`, at least one digit when the alphabet has digits."""
    r = random.Random(f"{seed}:{n}:{alphabet}")
    out = [r.choice(alphabet) for _ in range(n)]
    if any(c in alphabet for c in _DIGITS) and not any(c.isdigit() for c in out):
        out[n // 2] = r.choice(_DIGITS)
    if alphabet is _ALNUM and not any(c.isupper() for c in out):
        out[n // 3] = "Q"
    return "".join(out)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(header: bytes) -> tuple[str, str]:
    token = ".".join(
        [_b64url(header), _b64url(b'{"sub":"1234567890","name":"Ada","iat":1516239022}'), rnd(43, _URLSAFE, 7)]
    )
    return token, token


def _pem() -> tuple[str, str]:
    body = "\n".join(rnd(64, _B64, i) for i in range(5))
    return "-----BEGIN RSA PRIV" + f"ATE KEY-----\n{body}\n-----END RSA PRIV" + "ATE KEY-----", rnd(64, _B64, 2)


def positives() -> list[tuple[str, str, str]]:
    """(label, line as it appears in a diff/message/log, the secret that must not reach the LLM)."""
    s = rnd  # short alias
    cases: list[tuple[str, str, str]] = []

    def add(label: str, line: str, secret: str) -> None:
        assert secret in line, label
        cases.append((label, line, secret))

    # --- shapes ---------------------------------------------------------------------------
    aws_id = "AK" + "IA" + s(16, _UPPER + "234567", 1)
    add("aws access key id", f"aws_access_key_id = {aws_id}", aws_id)
    aws_secret = s(40, _B64, 2)
    add("aws secret key", f"AWS_SECRET_ACCESS_KEY: '{aws_secret}'", aws_secret)
    azure = s(86, _B64, 3) + "=="
    add(
        "azure storage AccountKey",
        "DefaultEndpointsProtocol=https;AccountName=acme;Account" + f"Key={azure};EndpointSuffix=core.windows.net",
        azure,
    )
    artifactory = "AKC" + s(70, _ALNUM, 4)
    add("artifactory api key", f"X-JFrog-Art-Api: {artifactory}", artifactory)
    art_ap = "AP" + "6" + s(12, _ALNUM, 5)
    add("artifactory password", f"artifactory_password={art_ap}", art_ap)
    discord = "M" + s(23, _ALNUM, 6) + "." + s(6, _URLSAFE, 6) + "." + s(27, _URLSAFE, 6)
    add("discord bot token", f"client.run('{discord}')", discord)
    gh = "gh" + "p_" + s(36, _ALNUM, 8)
    add("github token", f"git remote set-url origin x # {gh}", gh)
    glpat = "gl" + "pat-" + s(20, _URLSAFE, 9)
    add("gitlab personal token", f"GITLAB_PAT={glpat}", glpat)
    glagent = "gl" + "agent-" + s(50, _URLSAFE, 10)
    add("gitlab agent token", f"  token: {glagent}", glagent)
    slack = "xo" + "xb-" + s(12, _DIGITS, 11) + "-" + s(13, _DIGITS, 11) + "-" + s(24, _ALNUM, 11)
    add("slack bot token", f'app = App(token="{slack}")', slack)
    hook = (
        "https://hooks.slack.com/services/" + "T" + s(8, _UPPER, 12) + "/B" + s(8, _UPPER, 12) + "/" + s(24, _ALNUM, 12)
    )
    add("slack webhook", f"curl -X POST {hook} -d @payload.json", hook)
    stripe = "sk" + "_live_" + s(24, _ALNUM, 13)
    add("stripe key", f"stripe.api_key = '{stripe}'", stripe)
    openai = "s" + "k-proj-" + s(48, _URLSAFE, 14)
    add("openai key", f'client = OpenAI(api_key="{openai}")', openai)
    google = "AI" + "za" + s(35, _URLSAFE, 15)
    add("google api key", f"<meta name=maps content={google}>", google)
    pypi = "py" + "pi-AgEIcHlwaS5vcmc" + s(60, _URLSAFE, 16)
    add("pypi token", f"password = {pypi}", pypi)
    npm = "np" + "m_" + s(36, _ALNUM, 17)
    add("npm token", f"//registry.npmjs.org/:_authToken={npm}", npm)
    npm_uuid = "743b294a-cd03-11ec-9d64-0242ac120002"
    add("npmrc auth token (uuid)", f"//registry.npmjs.org/:_authToken={npm_uuid}", npm_uuid)
    sendgrid = "S" + "G." + s(22, _URLSAFE, 18) + "." + s(43, _URLSAFE, 18)
    add("sendgrid key", f"const sg = require('@sendgrid/mail'); sg.setApiKey('{sendgrid}')", sendgrid)
    telegram = s(10, _DIGITS, 19) + ":AA" + s(33, _URLSAFE, 19)
    add("telegram bot token", f"bot = telebot.TeleBot('{telegram}')", telegram)
    twilio_sk = "S" + "K" + s(32, _HEXL, 20)
    add("twilio api key", f"client = Client({twilio_sk!r}, secret)", twilio_sk)
    twilio_ac = "A" + "C" + s(32, _HEXL, 21)
    add("twilio account sid", f"TWILIO_ACCOUNT={twilio_ac}", twilio_ac)
    mailchimp = s(32, _HEXL, 22) + "-us30"
    add("mailchimp key", f"mc.set_config({{'api': '{mailchimp}'}})", mailchimp)
    square = "sq0" + "csp-" + s(43, _URLSAFE, 23)
    add("square oauth secret", f"SQUARE={square}", square)
    hf = "h" + "f_" + s(34, _LOWER + _UPPER, 24)
    add("hugging face token", f"huggingface-cli login --token {hf}", hf)
    jwt, _ = _jwt(b'{"alg":"HS256","typ":"JWT"}')
    add("jwt", f"curl -H 'X-Session: {jwt}'", jwt)
    jwt_odd, _ = _jwt(b'{\n  "typ": "JWT",\n  "alg": "RS512"\n}')
    add("jwt with an unusual header", f"session = {jwt_odd}", jwt_odd)
    pem, pem_line = _pem()
    add("private key", pem, pem_line)
    add("basic auth in a url", "DATABASE_URL=postgres://app:Zq8vT2mw9pL@db.internal:5432/app", "Zq8vT2mw9pL")
    add("bearer header", "curl -H 'Authorization: Bearer " + s(40, _ALNUM, 25) + "'", s(40, _ALNUM, 25))
    basic = base64.b64encode(b"deploy:" + s(16, _ALNUM, 26).encode()).decode()
    add("basic auth header", f'headers = {{"Authorization": "Basic {basic}"}}', basic)
    add("curl user", "curl -u admin:" + s(14, _ALNUM, 27) + " https://ci.example.org/api", s(14, _ALNUM, 27))

    # --- context: a credential named by a nearby word ---------------------------------------
    add("mailgun token in prose", "mailgun token '" + s(32, _HEXL, 30) + "' for the sandbox", s(32, _HEXL, 30))
    add("log line Using Key=", "2026-01-28 10:00:01 INFO Using Key=" + s(32, _ALNUM, 31), s(32, _ALNUM, 31))
    add("jenkins credentials xml", "<secret>" + s(24, _ALNUM, 32) + "</secret>", s(24, _ALNUM, 32))
    add("xml element on three lines", "<apiToken>\n    " + s(32, _ALNUM, 33) + "\n</apiToken>", s(32, _ALNUM, 33))
    add("cli flag", "slcli --softlayer-api-key " + s(64, _HEXL, 34) + " vs list", s(64, _HEXL, 34))
    add("cli flag with =", "deploy --api-token=" + s(30, _ALNUM, 35), s(30, _ALNUM, 35))
    add("short odd name", 'clou_pw = "' + s(18, _ALNUM, 36) + '"', s(18, _ALNUM, 36))
    add("password with spaces", 'password = "correct horse battery staple"', "correct horse battery staple")
    add("yaml password", "  db_password: Tr0ub4dor&3", "Tr0ub4dor&3")
    add("comparison", 'if (api_key == "' + s(28, _ALNUM, 37) + '") {', s(28, _ALNUM, 37))
    add("reversed comparison", 'if ("' + s(20, _ALNUM, 38) + '" === my_password) {', s(20, _ALNUM, 38))
    add("go short assignment", 'stripeToken := "' + s(30, _ALNUM, 39) + '"', s(30, _ALNUM, 39))
    add("go var with type", 'var datadogToken string = "' + s(32, _HEXL, 40) + '"', s(32, _HEXL, 40))
    add(
        "java setProperty",
        'System.setProperty("ALGOLIA_TOKEN", "' + s(32, _LOWER + _DIGITS, 41) + '")',
        s(32, _LOWER + _DIGITS, 41),
    )
    add("c array", 'char secrete[25] = "' + s(22, _ALNUM + "!@#", 42) + '";', s(22, _ALNUM + "!@#", 42))
    add("objective-c", 'NSString *clientSecret = @"' + s(40, _ALNUM, 43) + '";', s(40, _ALNUM, 43))
    add("dotnet appSettings", '<add key="PaymentApiKey" value="' + s(32, _ALNUM, 44) + '" />', s(32, _ALNUM, 44))
    add("json client secret", '{"client_secret": "' + s(34, _URLSAFE, 45) + '"}', s(34, _URLSAFE, 45))
    add(".env token", "SENTRY_AUTH_TOKEN=" + s(64, _HEXL, 46), s(64, _HEXL, 46))
    add("php", "$mailchimpToken .= '" + s(30, _ALNUM, 47) + "';", s(30, _ALNUM, 47))
    add("makefile", "SONAR_TOKEN ?= " + s(40, _HEXL, 48), s(40, _HEXL, 48))
    add("kotlin", 'val slackSecret = "' + s(32, _HEXL, 49) + '"', s(32, _HEXL, 49))
    add("ibm cloud api key", "ibm_cloud_iamapikey= " + s(44, _URLSAFE, 50), s(44, _URLSAFE, 50))
    add("properties file", "spring.datasource.password=" + s(16, _ALNUM + "#%", 51), s(16, _ALNUM + "#%", 51))
    add("numeric client secret", 'asanaToken = "' + s(16, _DIGITS, 52) + '"', s(16, _DIGITS, 52))
    add("commit message", "Rotate the staging creds; old one was api_key=" + s(32, _ALNUM, 53), s(32, _ALNUM, 53))

    # --- issue 17: services no rule was written for, in the shapes that reached the LLM --------
    # (written here for made-up vendors; each failed before the context detector was generalised)
    v = s(28, _ALNUM, 70)
    add("vendor, credential word, dash", f"quokkapay token - '{v}'", v)
    v = s(28, _HEXL, 71)
    add("vendor, credential word, table cell", f"| quokkapay api key | {v} |", v)
    v = s(26, _ALNUM, 72)
    add("credential word, a space, the value", f"wombat secret {v} (staging)", v)
    add("prose: the password is", "For the staging box the password is 'Tr0ub4dor&3x'", "Tr0ub4dor&3x")
    v = s(12, _B64, 73) + " " + s(30, _B64, 73) + "="
    add("jenkins credentials.xml, braced", "      <secret>{" + v + "}</secret>", v.split()[1])
    v = s(22, _LOWER + _DIGITS, 75)
    add("log line, word inside a lowercase name", f"[DEBUG] Using wombatapisecretkey={v}", v)
    v = s(24, _ALNUM, 76)
    add("log line, camelCase name ending in String", f"2026-03-04 10:11:12 DEBUG quokkaAccessTokenString={v} ok", v)
    v = base64.b64encode(s(14, _ALNUM, 77).encode()).decode() + ":" + s(20, _HEXL, 77)
    add("parts joined by a colon after base64 padding", f"secret={v}", v)
    v = base64.b64encode(s(10, _ALNUM, 78).encode()).decode() + ":" + s(24, _HEXL, 78)
    add(
        "a block of token, secret, server lines",
        f"[quokka]\ntoken={s(24, _ALNUM, 79)}\nsecret={v}\nserver=api.quokka.example",
        v,
    )
    v = s(30, _ALNUM, 80)
    add("the same value again on the line", f"quokkapay token = '{v}' | '{v}'", v)
    v = s(32, _ALNUM, 81)
    add("name on one line, value on the next", f"quokka_access_token:\n    '{v}'", v)
    v = s(26, _ALNUM, 82)
    add("a token in a URL's query", f"GET https://api.quokka.example/v2/items?api_token={v}&page=2", v)
    v = s(18, _ALNUM, 83)
    add("-u user -p password", f"docker login -u ci-bot -p {v} registry.quokka.example", v)
    v = s(36, _ALNUM, 84)
    add("a token as a URL's user", f"git clone https://{v}@git.quokka.example/team/app.git", v)
    v = "qka." + s(40, _ALNUM, 85)
    add("a dotted random value after apikey", f"apikey: {v}", v)
    v = s(44, _B64, 86)
    add("a label with a number", f"Unseal Key 2: {v}", v)
    v = "live_" + s(9, _DIGITS, 87) + "_" + s(30, _ALNUM, 87)
    add("a prefixed token with a numeric middle", f"stream: {v}", v)

    # --- held-out Kingfisher examples found these shapes (written fresh here, made-up vendors) --
    v = s(32, _ALNUM, 90)
    add("prose: the access token is, no quotes", f"the quokkapay access token is {v}", v)
    v = s(40, _ALNUM, 91)
    add("credential word glued between name and value", f"quokkapay-SECRET-{v}", v)
    v = "1b4e28ba-2fa1-41d2-883f-" + s(12, _HEXL, 92)
    add("uppercase credential word glued to a uuid", f"wombatKEY-{v}", v)
    v = s(36, _ALNUM, 93)
    add("uppercase ACCESS glued to the name", f"quokkaACCESS={v}", v)
    v = s(34, _ALNUM, 94)
    add("a vendor's name alone, then a random token", f"wombat {v}", v)
    v = "qkp_" + s(22, _ALNUM, 95) + "_" + s(18, _ALNUM, 95)
    add("a vendor's name and =, a prefixed token with an underscore inside", f"quokka = {v}", v)
    v = s(30, _ALNUM, 96)
    add("a client built with a random literal", f'client = QuokkaClient("{v}")', v)
    v = "qk-u-" + s(40, _ALNUM, 97)
    add("a prefixed token with a one-letter middle", f"QUOKKA={v}", v)
    v = s(44, _ALNUM, 98)
    add("a vendor's name, = and no space, a random token", f"wombatpay={v}", v)
    v = s(40, _HEXL, 99)
    add("PRIVATEkey glued between name and a hex value", f"quokkaPRIVATEkey-{v}", v)
    v = "eu01xx" + s(34, _HEXL, 100)
    add("a license key", f"  license: {v}", v)
    v = s(28, _DIGITS + _HEXL, 101)
    add("a credential word in capitals as a label", f"quokka SECRET {v}", v)
    v = s(24, _UPPER + _DIGITS, 102)
    add("two words in capitals as a label", f"wombat PRIVATE TOKEN {v}", v)
    v = s(48, _HEXL, 103)
    add("capitals then a lower-case word in one name, a space, the value", f"quokkaPRIVATEkey {v}", v)
    v = s(20, _UPPER + _DIGITS, 104)
    add("a label of words on one line, the value alone on the next", f"Wombat private access key\n{v}", v)
    return cases


def negatives() -> list[str]:
    """Ordinary code, configs and prose that must pass untouched."""
    return [
        "permissions:\n  id-token: write\n  contents: read",
        # argparse's --help in a README: a flag, then its metavar (once crashed the flag rule)
        "   --exclude-secrets EXCLUDE_SECRETS\n  --api-token TOKEN",
        "    secrets: inherit",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "password: ${DB_PASSWORD}",
        "api_key = os.environ['OPENAI_API_KEY']",
        "api_key = settings.openai_api_key",
        "token = get_token()",
        "self.token = token",
        "api_key: str | None = None",
        "max_tokens = 4096",
        "tokenizer = AutoTokenizer.from_pretrained(name)",
        "key = cache_key(user_id)",
        "sort_key = lambda item: item.name",
        "password_field = models.CharField(max_length=128)",
        'token_url = "https://oauth2.googleapis.com/token"',
        'token_type = "bearer"',
        '"Authorization": f"Bearer {token}"',
        'headers["Authorization"] = "Bearer " + token',
        "session: Session = Depends(get_session)",
        "let status_token = match rule.status() {",
        'sha256 = "' + rnd(64, _HEXL, 60) + '"',
        "rev: " + rnd(40, _HEXL, 61),
        "integrity: sha512-" + rnd(86, _B64, 62) + "==",
        'uuid = "123e4567-e89b-12d3-a456-426614174000"',
        'client_id = "123e4567-e89b-12d3-a456-426614174000"  # test fixture',
        'version = "1.2.3-rc.1"',
        'path = "/etc/ssl/certs/ca-certificates.crt"',
        'secret_file = "./secrets/dev.env"',
        'url = "https://example.com/api/v1/users?page=2"',
        'data = "' + base64.b64encode(b"hello world, this is ordinary text").decode() + '"',
        'icon: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"',
        "id: msg_01" + rnd(22, _ALNUM, 63),
        "tool_use_id='toolu_01" + rnd(22, _ALNUM, 64) + "'",
        "Pass `--preview-features sbom-export` to disable this warning.",
        "if password == 'admin':",
        "api_key='test-key-123',",
        "'Authorization': 'Bearer fake-bearer-token',",
        "password = getpass.getpass()",
        "The token is passed to the server; the password is never stored.",
        "def login(user: str, password: str) -> bool:",
        "<div class='sk-spinner-fading-circle-wrapper'>",
        "https://{user}:{password}@host",
        "-----BEGIN CERTIFICATE-----",
        "const { token } = useAuth();",
        "auth_token_header = 'X-Auth-Token'",
        "api_key = _api_key_sentinel",
        "last_checkpoint_key: Option<ExceptionCheckpointKey>,",
        "    signature: " + rnd(120, _B64, 65),
        # issue 17: what the generalised context detector must still leave alone
        "token = self.tokenizer.encode(x)",
        'secret_key = os.environ["SECRET_KEY"]',
        "password: str = Field(..., min_length=8)",
        "remaining = token - 1",
        "The secret sauce is a cache in front of the resolver.",
        "| token | str | The API token sent with every request |",
        "The [API Reference](api/agent.md) covers the full interface.",
        "{{ token | default('') }}",
        "api_key: settings.OPENAI_API_KEY_2024",
        "https://github.com/astral-sh/uv/commit/" + rnd(40, _HEXL, 66),
        'source = { git = "https://github.com/org/repo?rev=' + rnd(40, _HEXL, 67) + '" }',
        'idempotency_key = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"',
        "python -u run.py -p 8080",
        "uv run -p 3.12 -- pytest",
        'this.addPassword = "#add-password";',
        'policy = "arn:aws:iam::aws:policy/IAMUserChangePassword"',
        "put '/forgot-password' => \"cms/sites/passwords#update\"",
        "hotkey = 'ctrl+shift+k'",
        "login: octocat",
        "tokenizer_name = 'bert-base-uncased'",
        "secretary = Person(name='Ada')",
        "password_label = 'Password:'",
        "self.assertEqual(token.kind, TokenKind.Name)",
        "key - value pairs are sorted by key",
        "Build the client first, then pass `transport` as `http_transport`.",
        "- Expand `uv tool list` output\n- Then pass `uv tool list` to the checker",
        "return Lease(token=f'lease-{attempt}')",
        'password = "{db_password}"',
        '<add key="ConnectionString_Orders2" value="Server=db1;Database=orders" />',
        'cache = {"key": "PrimaryCustomerAccount_V2"}',
        "for part in parts:\n    if not token:\n        continue",
        "body: grant_type=refresh_token&client_secret=%5B%27scrubbed%27%5D&refresh_token=%5B%27scrubbed%27%5D",
        "provider = make_provider('openai', api_key='first', base_url=BASE_URL)",
        # random values whose names say what they are: ids, signatures, encrypted blobs, a refspec
        "      id: msg_011CdkFLHSiQ8ELpajXjqP1j\n        call_id: call_vnlaFYmpoXTeM8aMi5LWUYvG",
        "      responseId: NKRzapWWGK2Bz7IPy4-KmA4",
        "        thoughtSignature: " + rnd(64, _ALNUM, 68),
        "        encrypted_index: " + rnd(40, _ALNUM, 69),
        "git fetch 'https://git:****@github.com/acme/uv-private-pypackage' '+HEAD:refs/remotes/origin/HEAD'",
        "access_log = logging.getLogger('uvicorn.access')",
        "private = PrivateAttr(default_factory=dict)",
        "type WouldBeBivariantLiteral1 = WouldBeBivariant[Literal[1]]",
        "my-secret-config-map-name",
        # from pydantic's and pytest's own tests (repositories the detector was never tuned on)
        "assert SecretStr('café') != SecretStr('cafe')",
        "assert SecretDate('2017-01-01') != SecretDate('2018-01-01')",
        "assert repr(f.value) == \"SecretDate('****/**/**')\"",
        'result = pytester.runpytest("-Werror::pytest.PytestRemovedIn10Warning")',
        '# warnings.filterwarnings("error", category=pytest.PytestRemovedIn10Warning)',
        # from mypy's and vllm-fork's history (never tuned on): C names made of words, a glob
        "    r3 = CPyList_GetItemInt64(ls, r0)\n[case testVecI64ForLoop_64bit]",
        "static tuple_T2VvVi tuple_undefined_T2VvVi = { { -1, NULL } , { -1, 0 } };",
        '    if [[ "$HF_TOKEN" != hf_* ]]; then',
        'license = "MIT"\nlicense = { text = "Apache-2.0" }\nlicense-files = ["LICENSE*"]',
        "KEY FEATURES of the release\nthe SECRET INGREDIENT_LIST_FOR_TODAY\nSECRET KEY_ROTATION_PERIOD_DAYS",
        "    if not token\n        continue_processing_items",
    ]
