"""The vendor token tables: one row per vendor, each table one rule of shapes.py.

Data only, apart from the rules' machinery because it grows by a row with every vendor.
"""

from __future__ import annotations

# Vendor tokens with a fixed prefix or layout, one row per vendor: (vendors, branch, hints).
# Each table becomes one alternation (one regex pass instead of one per vendor); a row's vendors
# let bench/eval_secrets.py leave the rows written for a vendor out (see redactor()).
PREFIXED_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # Fixed vendor prefixes followed by a long random tail.
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shpat_", "shpca_", "shppa_", "shpss_")),
    ("digitalocean", r"do[pro]_v1_[a-f0-9]{64}", ("dop_v1_", "dor_v1_", "doo_v1_")),
    ("doppler", r"dp\.(?:pt|st|ct|scim|sa)\.[A-Za-z0-9]{40,}", ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.")),
    ("grafana", r"gl(?:c|sa)_[A-Za-z0-9_+/=\-]{32,}", ("glc_", "glsa_")),
    ("linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", ("lin_api_", "lin_oauth_")),
    ("postman", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak-",)),
    ("pulumi", r"pul-[a-f0-9]{40}", ("pul-",)),
    ("sendinblue brevo", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ("xkeysib-",)),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?", ("dapi",)),
    ("1password onepassword", r"ops_eyJ[A-Za-z0-9+/]{100,}", ("ops_ey",)),
    ("atlassian jira confluence", r"ATATT3[A-Za-z0-9_\-=]{100,}", ("atatt3",)),
    ("atlassian jira confluence", r"ATCTT3[A-Za-z0-9_\-=]{100,}", ("atctt3",)),
    ("rubygems", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    ("docker dockerhub", r"dckr_pat_[A-Za-z0-9_\-]{27,}", ("dckr_pat_",)),
    ("planetscale", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9=_.\-]{32,}", ("pscale_",)),
    ("sentry", r"sntrys_eyJ[A-Za-z0-9+/=_\-]{50,}", ("sntry",)),
    ("sentry", r"sntryu_[a-f0-9]{64}", ("sntry",)),
    ("hashicorp vault hashicorpvault", r"hvs\.[A-Za-z0-9_\-]{90,}", ("hvs.",)),
    ("hashicorp vault hashicorpvault", r"hvb\.[A-Za-z0-9_\-]{138,}", ("hvb.",)),
    ("typeform", r"tfp_[A-Za-z0-9]{50,}", ("tfp_",)),
    ("netlify", r"nfp_[A-Za-z0-9]{36}", ("nfp_",)),
    ("figma", r"figd_[A-Za-z0-9_\-]{40}", ("figd_",)),
    ("flutterwave", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", ("flwseck",)),
    ("hashicorp terraform", r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9=_\-]{60,}", ("atlasv1",)),
    ("stripe", r"(?:r|s)k_(?:live|test)_[A-Za-z0-9]{20,}", ()),
    ("mailgun", r"key-[0-9a-f]{32}", ()),
    ("azure microsoft", r"AccountKey-[A-Za-z0-9]{20,}", ("accountkey-",)),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}", ("ezak", "eztk")),
    ("alibaba aliyun", r"LTAI[A-Za-z0-9]{20}", ("ltai",)),
    ("clojars", r"CLOJARS_[a-z0-9]{60}", ("clojars_",)),
    ("sourcegraph", r"sgp_[a-fA-F0-9]{16}_[a-fA-F0-9]{40}", ("sgp_",)),
    ("elevenlabs stripe", r"sk_[a-f0-9]{48}", ()),
    ("deepl", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx", (":fx",)),
    ("google gcp", r"ya29\.[A-Za-z0-9_\-]{30,}", ("ya29.",)),
    ("google gcp", r"1//0[A-Za-z0-9_\-]{40,}", ("1//0",)),
    (
        "aws amazon",
        r"AGPA[A-Z0-9]{16}|AIDA[A-Z0-9]{16}|AROA[A-Z0-9]{16}|ANPA[A-Z0-9]{16}",
        ("agpa", "aida", "aroa", "anpa"),
    ),
)
LAYOUT_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("adobe", r"p8e-[a-z0-9]{32}", ("p8e-",)),
    ("airtable", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", ("pat",)),
    ("artifactory jfrog", r"cmVmd[A-Za-z0-9]{59}", ("cmvmd",)),
    ("aws amazon", r"ABSK[A-Za-z0-9+/]{100,}=*", ("absk",)),
    ("aws amazon", r"bedrock-api-key-[A-Za-z0-9+/=]{20,}", ("bedrock-api-key-",)),
    ("clickhouse", r"4b1d[A-Za-z0-9]{38}", ("4b1d",)),
    ("cloudflare", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}", ("v1.0-",)),
    ("dynatrace", r"dt0[a-z][0-9]{2}\.[a-z0-9]{24}\.[a-z0-9]{64}", ("dt0",)),
    ("facebook meta", r"EAA[A-Za-z0-9]{80,}", ("eaa",)),
    ("flutterwave", r"FLW(?:PUB|SEC)K(?:_TEST)?-[a-h0-9]{12,}(?:-X)?", ("flw",)),
    ("frameio", r"fio-u-[A-Za-z0-9\-_=]{64}", ("fio-u-",)),
    ("gitlab", r"_gitlab_session=[a-z0-9]{32}", ("_gitlab_session",)),
    ("octopus", r"API-[A-Z0-9]{26}", ("api-",)),
    ("openshift redhat", r"sha256~[\w\-]{43}", ("sha256~",)),
    ("slack", r"xoxe(?:\.xox[bp])?-\d-[A-Z0-9]{100,}", ("xoxe",)),
    ("scalingo", r"tk-us-[\w\-]{48}", ("tk-us-",)),
    ("settlemint", r"sm_[pas]at_[A-Za-z0-9]{16}", ("sm_",)),
    ("sourcegraph", r"sgp_local_[a-fA-F0-9]{40}", ("sgp_local_",)),
    ("shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", ("shippo_",)),
    ("azure microsoft", r"[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34}", ("q~",)),
    ("1password onepassword", r"A3-[A-Z0-9]{6}-[A-Z0-9\-]{20,}", ("a3-",)),
    ("heroku", r"HRKU-AA[0-9a-zA-Z_\-]{58}", ("hrku-",)),
    ("readme", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    ("sendgrid", r"SG\.[\w\-=.]{60,}", ("sg.",)),
    ("facebook meta", r"[0-9]{15,16}\|[A-Za-z0-9_\-]{27}", ("|",)),
    ("stripe elevenlabs freemius", r"sk_[A-Za-z0-9]{30,}", ("sk_",)),
)
