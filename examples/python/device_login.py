#!/usr/bin/env python3
"""Device login to Gatehouse from Python (a notebook, a script), standard library only (3.8+).

    python3 device_login.py --url https://gatehouse.example.com --username you@example.com

prints a page address and a code; open the page in a browser, check that it shows the same code,
sign in as that account and approve. The script then holds your access token and calls
GET /assets/version with it. In a notebook:

    from device_login import device_login
    token = device_login("https://gatehouse.example.com", "you@example.com")

The flow is RFC 8628: ask the device-authorization endpoint for a code, then poll the token
endpoint at the interval the server names, five seconds more after each `slow_down`, until the
person approves (a token), denies (`access_denied`) or the code expires (`expired_token`). A poll
that gets no answer in time, or a server error, is retried up to three times in a row.

Every failure is a LoginFailed whose message says what happened; run as a script, it is one line
on standard error and exit code 1 (Ctrl-C: exit 130).
"""

import argparse
import http.client
import json
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

CLIENT_ID = "gatehouse-cli"  # the public client the service knows command lines and notebooks by
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
TIMEOUT_SECONDS = 30  # for one request, answer included
MAX_RETRIES = 3  # failed polls in a row (no answer, a 5xx) retried before giving up

# what a server sends is printed without control characters (a hostile one could send terminal
# escape sequences in a code or a message)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _printable(value):
    return _UNPRINTABLE.sub("", str(value))


class LoginFailed(Exception):
    """The login ended without a token; the message says why and what to do."""


class _Unavailable(LoginFailed):
    """No answer in time, no connection, or a server error: polling retries it."""


def _request(url, form=None, token=None):
    """(status, parsed JSON object) of a GET, or of a form POST when `form` is given."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        request = urllib.request.Request(url, data=data, method="POST" if form is not None else "GET")
    except ValueError:
        raise LoginFailed("%s is not a URL: give the server's address, e.g. https://gatehouse.example.com" % _printable(url))
    request.add_header("Accept", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status = error.code
        try:
            text = error.read()
        except (OSError, http.client.HTTPException):
            text = b""
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            reason = "no answer within %d s" % TIMEOUT_SECONDS
        raise _Unavailable("cannot reach %s: %s; check the address and that the server is running" % (_printable(url), _printable(reason)))
    except (socket.timeout, TimeoutError):
        raise _Unavailable("%s did not answer within %d s; check that the server is running" % (_printable(url), TIMEOUT_SECONDS))
    except (OSError, ValueError, http.client.HTTPException) as error:  # a dropped connection, a garbled answer
        raise _Unavailable("cannot reach %s: %s; check the address and that the server is running" % (_printable(url), _printable(error)))
    try:
        body = json.loads(text.decode("utf-8"))
    except ValueError:
        body = None
    if not isinstance(body, dict):
        if status >= 500:
            raise _Unavailable("%s failed with HTTP %d (not a JSON answer); try again later" % (_printable(url), status))
        raise LoginFailed("%s answered HTTP %d without JSON; is this the address of a Gatehouse server?" % (_printable(url), status))
    return status, body


def _describe(body, status):
    """An OAuth error answer (RFC 6749 section 5.2) in a few words."""
    error = body.get("error")
    description = body.get("error_description")
    words = _printable(error) if isinstance(error, str) else "HTTP %d" % status
    return words + (": " + _printable(description) if isinstance(description, str) and description else "")


def _number(value, default):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else default


def device_login(base_url, username, out=sys.stdout):
    """Signs `username` in by device login; returns the access token. Raises LoginFailed."""
    base = base_url.rstrip("/")
    if not re.match(r"https?://[^/]", base):
        raise LoginFailed("%s is not a server's address: give it with https:// (or http:// on this machine), e.g. https://gatehouse.example.com" % _printable(base))
    status, metadata = _request(base + "/.well-known/oauth-authorization-server")
    device_endpoint = metadata.get("device_authorization_endpoint")
    token_endpoint = metadata.get("token_endpoint")
    if status != 200 or not isinstance(device_endpoint, str) or not isinstance(token_endpoint, str):
        raise LoginFailed("%s publishes no device login (no device_authorization_endpoint in its metadata); is this the address of a Gatehouse server?" % base)

    status, start = _request(device_endpoint, {"client_id": CLIENT_ID, "login_hint": username})
    if status != 200:
        raise LoginFailed("the server refused to start a device login (%s)" % _describe(start, status))
    device_code, user_code, page = start.get("device_code"), start.get("user_code"), start.get("verification_uri")
    if not all(isinstance(value, str) for value in (device_code, user_code, page)):
        raise LoginFailed("the server answered the device login without a device code, user code or verification URI")
    complete = start.get("verification_uri_complete")
    page = complete if isinstance(complete, str) else page
    interval = _number(start.get("interval"), 5)
    deadline = time.monotonic() + _number(start.get("expires_in"), 600)
    print("Open this page in a browser:\n\n  %s\n\nand check that it shows this code:\n\n  %s\n" % (_printable(page), _printable(user_code)), file=out, flush=True)
    print("Waiting for approval...", file=out, flush=True)

    failures = 0
    while time.monotonic() < deadline:
        time.sleep(interval)
        try:
            status, answer = _request(token_endpoint, {"grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": CLIENT_ID})
        except _Unavailable as failure:
            failures += 1
            if failures > MAX_RETRIES:
                raise LoginFailed("the server failed %d polls in a row (the last: %s); run the login again later" % (failures, failure))
            continue
        if status >= 500:
            failures += 1
            if failures > MAX_RETRIES:
                raise LoginFailed("the server failed %d polls in a row (the last: HTTP %d); run the login again later" % (failures, status))
            continue
        failures = 0
        if status == 200 and isinstance(answer.get("access_token"), str):
            return answer["access_token"]
        error = answer.get("error")
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval += 5
            continue
        if error == "access_denied":
            raise LoginFailed("the login was denied in the browser; run the login again if that was a mistake")
        if error == "expired_token":
            break
        if error == "invalid_grant":
            raise LoginFailed("the server no longer accepts this device code (already used, or the account was disabled since); run the login again")
        raise LoginFailed("the server refused the login (%s)" % _describe(answer, status))
    raise LoginFailed("the code expired before it was approved; run the login again and approve within the time shown")


def main():
    parser = argparse.ArgumentParser(description="Device login to Gatehouse, then GET /assets/version with the token.")
    parser.add_argument("--url", required=True, help="the server's address, e.g. https://gatehouse.example.com")
    parser.add_argument("--username", help="the e-mail address you sign in with (asked for when not given)")
    args = parser.parse_args()
    try:
        username = args.username
        if not username:
            try:
                username = input("E-mail address to sign in as: ").strip()
            except EOFError:  # standard input ended (closed, or empty) without an answer
                username = ""
                print()  # ends the prompt's line
        if not username:
            raise LoginFailed("no account named: give --username (the e-mail address you sign in with)")
        token = device_login(args.url, username)
        status, version = _request(args.url.rstrip("/") + "/assets/version", token=token)
    except KeyboardInterrupt:
        print("\ndevice login cancelled", file=sys.stderr)
        return 130
    except LoginFailed as failure:
        print("device login failed: %s" % failure, file=sys.stderr)
        return 1
    if status != 200:
        print("GET /assets/version answered HTTP %d: %s" % (status, _describe(version, status)), file=sys.stderr)
        return 1
    print("Signed in. /assets/version: %s" % json.dumps(version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
