#!/usr/bin/env python3
"""Send one email over SMTP and print a unified result: {"ok", "data", "error"}.

Parameters (see schema.json) come from one JSON-object argument (the skill contract of
`skillbake run` and DB-GPT's execute_skill_script_file, which pass them in sys.argv[1]; there
`"dry_run": true` previews instead of sending), --json, --params-file, or individual flags
(flags win over JSON):

    python3 scripts/send_email.py '{"to": "a@example.com", "subject": "Hi", "body": "Hello"}'
    python3 scripts/send_email.py --json '{"to": "a@example.com", "subject": "Hi", "body": "Hello"}'
    python3 scripts/send_email.py --to a@example.com --subject Hi --body Hello --attach report.pdf
    python3 scripts/send_email.py --params-file params.json --dry-run

SMTP settings are read from the environment:
    SMTP_HOST (required), SMTP_PORT (default 587, or 465 with ssl), SMTP_USER, SMTP_PASSWORD,
    SMTP_FROM (default SMTP_USER), SMTP_SECURITY = starttls | ssl | none (default starttls),
    SMTP_TIMEOUT seconds (default 15), SEND_EMAIL_ALLOWED_DOMAINS (optional comma-separated
    allow-list of recipient domains).

--dry-run validates everything and prints the message instead of sending it.
Exit code 0 when ok is true, 1 otherwise. Standard library only.
"""

import argparse
import datetime
import email.utils
import html.parser
import json
import mimetypes
import os
import re
import smtplib
import socket
import ssl
import sys
from email.message import EmailMessage

ALLOWED_KEYS = {"to", "cc", "bcc", "subject", "body", "content_type", "reply_to", "attachments"}
MAX_RECIPIENTS = 50
MAX_ATTACHMENTS = 10
MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
ADDRESS_RE = re.compile(r"^[^@\s<>(),;:\"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$")


class SkillError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def result(ok, data=None, code=None, message=None):
    return {"ok": ok, "data": data if ok else None,
            "error": None if ok else {"code": code, "message": message}}


def parse_recipients(value, field):
    """Accept "a@x.com, Bob <b@y.com>" or ["a@x.com", ...]; return list of (name, addr)."""
    if value is None:
        return []
    if isinstance(value, str):
        items = [part for part in re.split(r"[,;]", value) if part.strip()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        raise SkillError("INVALID_PARAMS", "%s must be a string or a list of strings" % field)
    parsed = []
    for item in items:
        name, addr = email.utils.parseaddr(item.strip())
        if not ADDRESS_RE.match(addr or ""):
            raise SkillError("INVALID_ADDRESS", "%s contains an invalid email address: %r" % (field, item.strip()))
        parsed.append((name, addr))
    return parsed


def validate(params):
    if not isinstance(params, dict):
        raise SkillError("INVALID_PARAMS", "parameters must be a JSON object")
    unknown = sorted(set(params) - ALLOWED_KEYS)
    if unknown:
        raise SkillError("INVALID_PARAMS", "unknown parameter(s): %s" % ", ".join(unknown))
    for key in ("to", "subject", "body"):
        if params.get(key) in (None, "", []):
            raise SkillError("INVALID_PARAMS", "missing required parameter: %s" % key)
    to = parse_recipients(params["to"], "to")
    cc = parse_recipients(params.get("cc"), "cc")
    bcc = parse_recipients(params.get("bcc"), "bcc")
    everyone = to + cc + bcc
    if not to:
        raise SkillError("INVALID_PARAMS", "to must contain at least one address")
    if len(everyone) > MAX_RECIPIENTS:
        raise SkillError("INVALID_PARAMS", "too many recipients (%d > %d)" % (len(everyone), MAX_RECIPIENTS))
    allowed = [d.strip().lower() for d in os.environ.get("SEND_EMAIL_ALLOWED_DOMAINS", "").split(",") if d.strip()]
    if allowed:
        blocked = [a for _, a in everyone if a.rsplit("@", 1)[1].lower() not in allowed]
        if blocked:
            raise SkillError("RECIPIENT_NOT_ALLOWED", "recipient domain not in SEND_EMAIL_ALLOWED_DOMAINS: %s"
                             % ", ".join(blocked))
    subject = params["subject"]
    if not isinstance(subject, str) or not subject.strip():
        raise SkillError("INVALID_PARAMS", "subject must be a non-empty string")
    if "\r" in subject or "\n" in subject:
        raise SkillError("INVALID_PARAMS", "subject must be a single line")
    if len(subject) > 200:
        raise SkillError("INVALID_PARAMS", "subject is longer than 200 characters")
    body = params["body"]
    if not isinstance(body, str) or not body.strip():
        raise SkillError("INVALID_PARAMS", "body must be a non-empty string")
    content_type = params.get("content_type", "plain")
    if content_type not in ("plain", "html"):
        raise SkillError("INVALID_PARAMS", "content_type must be 'plain' or 'html'")
    reply_to = None
    if params.get("reply_to"):
        reply_to = parse_recipients(params["reply_to"], "reply_to")
        if len(reply_to) != 1:
            raise SkillError("INVALID_PARAMS", "reply_to must be a single address")
    attachments = params.get("attachments") or []
    if not isinstance(attachments, list) or not all(isinstance(a, str) and a for a in attachments):
        raise SkillError("INVALID_PARAMS", "attachments must be a list of file paths")
    if len(attachments) > MAX_ATTACHMENTS:
        raise SkillError("INVALID_PARAMS", "too many attachments (%d > %d)" % (len(attachments), MAX_ATTACHMENTS))
    files, total = [], 0
    for path in attachments:
        if not os.path.isfile(path):
            raise SkillError("ATTACHMENT_NOT_FOUND", "attachment not found or not a file: %s" % path)
        size = os.path.getsize(path)
        total += size
        files.append((path, size))
    if total > MAX_ATTACHMENT_BYTES:
        raise SkillError("ATTACHMENT_TOO_LARGE", "attachments total %.1f MB, limit is %d MB"
                         % (total / 1048576.0, MAX_ATTACHMENT_BYTES // 1048576))
    return {"to": to, "cc": cc, "bcc": bcc, "subject": subject, "body": body,
            "content_type": content_type, "reply_to": reply_to[0] if reply_to else None, "attachments": files}


class _TextExtractor(html.parser.HTMLParser):
    def __init__(self):
        html.parser.HTMLParser.__init__(self)
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in ("br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def html_to_text(markup):
    parser = _TextExtractor()
    parser.feed(markup)
    text = "".join(parser.parts)
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+", " ", text)).strip() + "\n"


def smtp_settings(require):
    security = os.environ.get("SMTP_SECURITY", "starttls").strip().lower()
    if security not in ("starttls", "ssl", "none"):
        raise SkillError("SMTP_NOT_CONFIGURED", "SMTP_SECURITY must be starttls, ssl or none")
    host = os.environ.get("SMTP_HOST", "").strip()
    user = os.environ.get("SMTP_USER", "").strip()
    sender = os.environ.get("SMTP_FROM", "").strip() or user
    if require and not host:
        raise SkillError("SMTP_NOT_CONFIGURED", "SMTP_HOST is not set")
    if require and not sender:
        raise SkillError("SMTP_NOT_CONFIGURED", "set SMTP_FROM (or SMTP_USER) to the sender address")
    try:
        port = int(os.environ.get("SMTP_PORT") or (465 if security == "ssl" else 587))
        timeout = float(os.environ.get("SMTP_TIMEOUT") or 15)
    except ValueError:
        raise SkillError("SMTP_NOT_CONFIGURED", "SMTP_PORT and SMTP_TIMEOUT must be numbers")
    return {"host": host, "port": port, "user": user, "password": os.environ.get("SMTP_PASSWORD", ""),
            "sender": sender, "security": security, "timeout": timeout}


def build_message(p, sender):
    msg = EmailMessage()
    sender_addr = email.utils.parseaddr(sender)[1] or sender
    msg["From"] = sender
    msg["To"] = ", ".join(email.utils.formataddr(a) for a in p["to"])
    if p["cc"]:
        msg["Cc"] = ", ".join(email.utils.formataddr(a) for a in p["cc"])
    if p["reply_to"]:
        msg["Reply-To"] = email.utils.formataddr(p["reply_to"])
    msg["Subject"] = p["subject"]
    msg["Date"] = email.utils.formatdate(localtime=True)
    msg["Message-ID"] = email.utils.make_msgid(domain=sender_addr.rsplit("@", 1)[-1] or None)
    if p["content_type"] == "html":
        msg.set_content(html_to_text(p["body"]))
        msg.add_alternative(p["body"], subtype="html")
    else:
        msg.set_content(p["body"])
    attached = []
    for path, size in p["attachments"]:
        ctype, encoding = mimetypes.guess_type(path)
        if ctype is None or encoding is not None:
            ctype = "application/octet-stream"
        maintype, subtype = ctype.split("/", 1)
        with open(path, "rb") as handle:
            msg.add_attachment(handle.read(), maintype=maintype, subtype=subtype,
                               filename=os.path.basename(path))
        attached.append({"filename": os.path.basename(path), "size_bytes": size, "content_type": ctype})
    return msg, attached


def send(msg, p, cfg):
    recipients = [a for _, a in p["to"] + p["cc"] + p["bcc"]]
    context = ssl.create_default_context()
    if cfg["security"] == "ssl":
        server = smtplib.SMTP_SSL(cfg["host"], cfg["port"], timeout=cfg["timeout"], context=context)
    else:
        server = smtplib.SMTP(cfg["host"], cfg["port"], timeout=cfg["timeout"])
    try:
        server.ehlo()
        if cfg["security"] == "starttls":
            server.starttls(context=context)
            server.ehlo()
        if cfg["user"] and cfg["password"]:
            server.login(cfg["user"], cfg["password"])
        refused = server.send_message(msg, from_addr=email.utils.parseaddr(cfg["sender"])[1],
                                      to_addrs=recipients)
    finally:
        try:
            server.quit()
        except (smtplib.SMTPException, OSError):
            server.close()
    return [r for r in recipients if r not in refused], sorted(refused)


def run(params, dry_run):
    p = validate(params)
    cfg = smtp_settings(require=not dry_run)
    msg, attached = build_message(p, cfg["sender"] or "dry-run@localhost")
    summary = {
        "message_id": msg["Message-ID"],
        "from": msg["From"],
        "to": [a for _, a in p["to"]],
        "cc": [a for _, a in p["cc"]],
        "bcc": [a for _, a in p["bcc"]],
        "subject": p["subject"],
        "attachments": attached,
    }
    if dry_run:
        headers = "".join("%s: %s\n" % (k, v) for k, v in msg.items() if k.lower() != "content-type")
        if p["bcc"]:
            headers += "Bcc: %s (envelope only, not sent as a header)\n" % ", ".join(summary["bcc"])
        preview = headers + "\n" + p["body"].rstrip("\n") + "\n"
        if p["content_type"] == "html":
            preview += "[plain-text alternative]\n" + html_to_text(p["body"])
        preview += "".join("[attachment: %s, %d bytes, %s]\n" % (a["filename"], a["size_bytes"], a["content_type"])
                           for a in attached)
        summary.update({"dry_run": True, "smtp_host": cfg["host"] or None,
                        "size_bytes": len(msg.as_bytes()), "preview": preview})
        return result(True, summary)
    try:
        accepted, rejected = send(msg, p, cfg)
    except smtplib.SMTPAuthenticationError as exc:
        raise SkillError("SMTP_AUTH_FAILED", "the SMTP server rejected the login (%s); check SMTP_USER and "
                         "SMTP_PASSWORD" % exc.smtp_code)
    except smtplib.SMTPRecipientsRefused as exc:
        raise SkillError("RECIPIENTS_REFUSED", "the server refused every recipient: %s"
                         % ", ".join(sorted(exc.recipients)))
    except smtplib.SMTPSenderRefused as exc:
        raise SkillError("SENDER_REFUSED", "the server refused the sender address %s" % exc.sender)
    except smtplib.SMTPNotSupportedError:
        raise SkillError("SMTP_TLS_FAILED", "the server does not support STARTTLS; try SMTP_SECURITY=ssl")
    except ssl.SSLError as exc:
        raise SkillError("SMTP_TLS_FAILED", "TLS handshake with %s:%d failed: %s" % (cfg["host"], cfg["port"], exc))
    except (socket.timeout, TimeoutError):
        raise SkillError("TIMEOUT", "no answer from %s:%d within %g seconds"
                         % (cfg["host"], cfg["port"], cfg["timeout"]))
    except (smtplib.SMTPConnectError, smtplib.SMTPServerDisconnected, OSError) as exc:
        raise SkillError("SMTP_CONN_FAILED", "cannot connect to the mail server %s:%d (%s); check the network "
                         "and SMTP_HOST/SMTP_PORT" % (cfg["host"], cfg["port"], exc))
    except smtplib.SMTPException as exc:
        raise SkillError("SEND_FAILED", "the mail server reported an error: %s" % exc)
    summary.update({"dry_run": False, "accepted": accepted, "rejected": rejected,
                    "sent_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
    return result(True, summary)


def collect_params(args):
    params = {}
    if args.params_file:
        with open(args.params_file, encoding="utf-8") as handle:
            params = json.load(handle)
    elif args.json:
        params = json.loads(args.json)
    if not isinstance(params, dict):
        raise SkillError("INVALID_PARAMS", "parameters must be a JSON object")
    if args.body_file:
        with open(args.body_file, encoding="utf-8") as handle:
            params["body"] = handle.read()
    for key in ("to", "cc", "bcc", "subject", "body", "reply_to"):
        value = getattr(args, key)
        if value is not None:
            params[key] = value
    if args.html:
        params["content_type"] = "html"
    if args.attach:
        params["attachments"] = list(params.get("attachments") or []) + args.attach
    return params


def contract_params(argv):
    """The parameters when the only argument is a JSON object (the skill contract), else None."""
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return argv[0]
    return None


def take_dry_run(params, flag):
    """`dry_run` may be a parameter (the contract) as well as the --dry-run flag."""
    value = params.pop("dry_run", False)
    if not isinstance(value, bool):
        raise SkillError("INVALID_PARAMS", "dry_run must be true or false")
    return flag or value


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    contract = contract_params(argv)
    if contract is not None:
        argv = ["--json", contract]
    parser = argparse.ArgumentParser(description="Send an email via SMTP (unified JSON result).")
    parser.add_argument("--json", help="parameters as a JSON object (see schema.json)")
    parser.add_argument("--params-file", dest="params_file", help="file containing the JSON parameters")
    parser.add_argument("--to")
    parser.add_argument("--cc")
    parser.add_argument("--bcc")
    parser.add_argument("--subject")
    parser.add_argument("--body")
    parser.add_argument("--body-file", dest="body_file", help="read the body from a file")
    parser.add_argument("--reply-to", dest="reply_to")
    parser.add_argument("--html", action="store_true", help="body is HTML")
    parser.add_argument("--attach", action="append", help="file to attach (repeatable)")
    parser.add_argument("--dry-run", dest="dry_run", action="store_true", help="validate and print, do not send")
    args = parser.parse_args(argv)
    try:
        params = collect_params(args)
        out = run(params, take_dry_run(params, args.dry_run))
    except SkillError as exc:
        out = result(False, code=exc.code, message=str(exc))
    except (ValueError, OSError) as exc:  # bad JSON, unreadable params/body file
        out = result(False, code="INVALID_PARAMS", message="cannot read parameters: %s" % exc)
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
