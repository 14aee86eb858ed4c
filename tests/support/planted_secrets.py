"""Secrets of every kind a repository may hold, planted by the tests that prove none leaves the machine
(tests/integration/test_outbound.py, tests/integration/test_hostile_repo.py). Each is assembled at run
time so that this file does not trip secret scanners."""

from __future__ import annotations

import base64

AWS_ID = "AKIA" + "Z7QX4MPLR2KD8WNB"
AWS_SECRET = "wJa1rXUtnFEMIK7MD" + "ENGbPxRfiCY9q2ZtL4vRpQ"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = ("github_pat_" + "11ABCDEFG0123456789_"
              + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV0123456789")
OPENAI = "sk-proj-" + "Zx81kLm0Qp2Rt5Vw9Yb3Nc6Hd4Jf7Gs1"
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "q8Zt2LmX9vR4pW7nK3jH6dF1sA5gY0cB"
ANTHROPIC = "sk-ant-api03-" + "Qw7Er5Ty3Ui1Op9As8Df6Gh4Jk2Lz0Xc-vBnM7aa"
SLACK = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0AAA1BBB/B0CCC2DDD/" + "eEfFgGhHiIjJkKlLmMnN0011"
GOOGLE = "AIza" + "SyD4x9Kq2mP7vL0nR3tW8bZ5cF1hJ6gE2aQ"
STRIPE = "sk_live_" + "51HxQ2eLkdIwHu7ixAbCdEfGh"
STRIPE_RESTRICTED = "rk_live_" + "51HxQ2eLkdIwHu7ixZyXwVuTs"
JWT = ("eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
       + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_LINES = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
             "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
             "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo"]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n-----END RSA PRIVATE KEY-----"
DSN_PASSWORD = "Pg5ecr3t" + "Pass"
YAML_PASSWORD = "value" + "Kq7"  # db_password: <this>
YAML_ADMIN = "hunter" + "Adm1n"  # admin_pass: "<this>"
INI_PASSWORD = "ini" + "Passw0rd"
ENV_TOKEN = "env" + "T0ken" + "Value"
ENTROPY = "q8Zt2LmX9v" + "R4pW7nK3jH6dF1sA5gY0cB"
# The forms the first rules missed (issue 25): pairs, Basic headers, 0x keys, seed phrases, Twilio, PEM
# bodies in short fragments, a password in README prose
TUPLE_PASSWORD = "tup" + "Le7Secret"
LOGIN_PASSWORD = "smtp" + "Pass42x"
BASIC_PASSWORD = "basic" + "Pw9xQ"
BASIC = base64.b64encode(f"payments:{BASIC_PASSWORD}".encode()).decode()
ETH_KEY = "4c0883a69102937d6231471b5dbb6204" + "fe5129617082792ae468d01a3f362318"
SEED_PHRASE = "witch collapse practice feed shame open " + "despair creek road again ice least"
TWILIO_SID = "AC" + "0f1e2d3c4b5a6978" * 2
TWILIO_TOKEN = "9a8b7c6d5e4f3a2b" + "1c0d9e8f7a6b5c4d"
PEM_FRAGMENTS = ["MIIEowIBAAKCAQEA" + "u1SU", "1LfVLPHCozMx" + "H2Mo4lgO", "EePzNm0tRgeL" + "ezV6ffAt",
                 "0gunVTLw7onL" + "Rnrq0/Iz"]
README_PASSWORD = "Adm1n" + "Pass!7"
