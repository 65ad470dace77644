"""Files on appointments and conversations with the clinic (issue 28) through the real
`clinic serve` on 127.0.0.1: raw and multipart uploads, downloads streamed with their safety
headers, the photo's GPS tag gone from what the clinic downloads, the opening in the patient's
access log, a two-message conversation with unread counts, and bad input answered with a clear
code and nothing stored: over 10 MiB, interrupted half way, another patient's appointment,
another clinic's staff, 20 uploads at once."""

import concurrent.futures
import datetime
import http.client
import json
import os
import socket
import urllib.parse
import uuid

import pytest

from conftest import PASSWORD, STAFF_PASSWORD, api_patient, call, directory_site

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "ClinicImagesTests", "Fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        return handle.read()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with directory_site(str(tmp_path_factory.mktemp("attach")),
                        server_env={"CLINIC_AUTH_RATE": "100000/100000"}) as (clinic, server):
        yield clinic, server


def patient(base, login):
    return api_patient(base, login)[0]


def send(base, method, path, data, token, headers=None):
    """A request with a raw body; answers (status, headers, body bytes)."""
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    fields = {"Authorization": "Bearer " + token, **(headers or {})}
    try:
        connection.request(method, path, body=data, headers=fields)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def has_gps(data):
    """Whether a JPEG carries an EXIF GPS directory (tag 0x8825 in IFD0)."""
    import struct
    start = data.find(b"Exif\x00\x00")
    if start < 0:
        return False
    tiff = data[start + 6:]
    order = "<" if tiff[:2] == b"II" else ">"
    offset = struct.unpack(order + "I", tiff[4:8])[0]
    count = struct.unpack(order + "H", tiff[offset:offset + 2])[0]
    return any(struct.unpack(order + "H", tiff[offset + 2 + 12 * k:offset + 4 + 12 * k])[0] == 0x8825 for k in range(count))


def error_code(body):
    return json.loads(body)["error"]["code"]


def multipart(name, content_type, data):
    boundary = "----clinic" + uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: {content_type}\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), "multipart/form-data; boundary=" + boundary


def book(clinic, base, token, clinic_id):
    department = clinic.json("departments", str(clinic_id))[0]["id"]
    day = (datetime.date.today() + datetime.timedelta(days=3)).isoformat()
    slot = clinic.free_slot(department, day, days=7)
    reply = call(base, "POST", "/v1/appointments", {"departmentId": department, "start": slot["start"]}, token=token)
    assert reply.status == 201, reply.body
    return reply.body["id"]


@pytest.fixture(scope="module")
def world(site):
    clinic, server = site
    base = server.url
    clinic_id = clinic.json("clinics", "nearest", "--lat", "40.7549", "--lon", "-73.9840", "--limit", "2")
    first, second = clinic_id[0]["id"], clinic_id[1]["id"]
    anna = patient(base, "anna-files")
    visit = book(clinic, base, anna, first)
    for login, clinic_number in (("desk-files", first), ("desk-elsewhere", second)):
        clinic.run("admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role",
                   "receptionist", "--clinic", str(clinic_number), "--password-stdin", stdin=STAFF_PASSWORD + "\n")
    desk = call(base, "POST", "/v1/staff/sessions", {"login": "desk-files", "password": STAFF_PASSWORD}).body["token"]
    elsewhere = call(base, "POST", "/v1/staff/sessions", {"login": "desk-elsewhere", "password": STAFF_PASSWORD}).body["token"]
    return dict(clinic=clinic, base=base, anna=anna, visit=visit, desk=desk, elsewhere=elsewhere, clinic_id=first)


def test_a_photo_and_a_conversation_between_patient_and_front_desk(world):
    base, anna, visit, desk = world["base"], world["anna"], world["visit"], world["desk"]
    photo = fixture("portrait-exif.jpg")
    assert b"Exif" in photo and has_gps(photo)
    body, content_type = multipart("rash.jpg", "image/jpeg", photo)
    status, _, answer = send(base, "POST", f"/v1/appointments/{visit}/attachments", body, anna, {"Content-Type": content_type})
    assert status == 201, answer
    item = json.loads(answer)
    assert item["contentType"] == "image/jpeg" and item["name"] == "rash.jpg" and (item["width"], item["height"]) == (300, 400)

    listed = call(base, "GET", f"/v1/appointments/{visit}/attachments", token=anna)
    assert [entry["id"] for entry in listed.body["items"]] == [item["id"]]

    # The receptionist opens it: no EXIF or GPS in what is downloaded, and the patient sees the opening.
    status, headers, data = send(base, "GET", f"/v1/staff/appointments/{visit}/attachments/{item['id']}", None, desk)
    assert status == 200 and data[:3] == b"\xff\xd8\xff" and b"Exif" not in data and not has_gps(data)
    assert headers["x-content-type-options"] == "nosniff" and "sandbox" in headers["content-security-policy"]
    assert len(data) == item["size"]
    log = call(base, "GET", "/v1/me/access-log", token=anna).body
    assert any(entry["action"] == "attachment.open" and entry["appointmentId"] == visit for entry in log), log

    # Two messages: the patient asks, the front desk answers; unread counts on both sides.
    asked = call(base, "POST", f"/v1/appointments/{visit}/messages", {"text": "May I bring my daughter?"}, token=anna)
    assert asked.status == 201, asked.body
    threads = call(base, "GET", "/v1/staff/threads?state=open", token=desk).body
    assert threads["unread"] >= 1 and any(t["appointmentId"] == visit and t["unread"] == 1 for t in threads["items"])
    answered = call(base, "POST", f"/v1/staff/appointments/{visit}/messages", {"text": "Yes, of course."}, token=desk)
    assert answered.status == 201 and answered.body["author"] == "staff"
    assert call(base, "GET", "/v1/me/thread-unread", token=anna).body["unread"] == 1
    inbox = call(base, "GET", "/v1/messages", token=anna).body
    assert inbox[0]["appointmentId"] == visit and "Yes, of course" not in inbox[0]["body"]
    thread = call(base, "GET", f"/v1/appointments/{visit}/messages", token=anna).body
    assert [m["text"] for m in thread["items"]] == ["May I bring my daughter?", "Yes, of course."] and thread["unread"] == 1
    assert call(base, "GET", "/v1/me/thread-unread", token=anna).body["unread"] == 0
    closed = call(base, "POST", f"/v1/staff/appointments/{visit}/thread/close", token=desk)
    assert closed.status == 204
    assert any(t["appointmentId"] == visit for t in call(base, "GET", "/v1/staff/threads?state=closed", token=desk).body["items"])
    assert call(base, "GET", "/v1/staff/threads?state=maybe", token=desk).status == 400

    # Another clinic's staff find nothing; to another patient the appointment does not exist.
    assert send(base, "GET", f"/v1/staff/appointments/{visit}/attachments/{item['id']}", None, world["elsewhere"])[0] == 404
    bob = patient(base, "bob-files")
    assert send(base, "GET", f"/v1/appointments/{visit}/attachments/{item['id']}", None, bob)[0] == 404
    status, _, answer = send(base, "POST", f"/v1/appointments/{visit}/attachments", fixture("tiny.pdf"), bob,
                             {"Content-Type": "application/pdf"})
    assert status == 404, answer

    # A PDF is served as a download, never inline; the patient removes it.
    status, _, answer = send(base, "POST", f"/v1/appointments/{visit}/attachments?name=referral.pdf", fixture("tiny.pdf"), anna,
                             {"Content-Type": "application/pdf"})
    assert status == 201, answer
    pdf = json.loads(answer)
    status, headers, data = send(base, "GET", f"/v1/appointments/{visit}/attachments/{pdf['id']}", None, anna)
    assert status == 200 and data == fixture("tiny.pdf")
    assert headers["content-disposition"].startswith("attachment;") and headers["content-type"] == "application/pdf"
    assert send(base, "DELETE", f"/v1/appointments/{visit}/attachments/{pdf['id']}", None, anna)[0] == 204
    assert send(base, "GET", f"/v1/appointments/{visit}/attachments/{pdf['id']}", None, anna)[0] == 404


def test_bad_uploads_are_refused_and_store_nothing(world):
    base, visit = world["base"], world["visit"]
    token = patient(base, "carol-files")
    mine = book(world["clinic"], base, token, world["clinic_id"])
    path = f"/v1/appointments/{mine}/attachments"
    cases = [
        ("11 MiB", b"%PDF-1.4\n" + b"a" * (11 * 1024 * 1024), {"Content-Type": "application/pdf"}, 413, "too_large"),
        ("empty", b"", {"Content-Type": "image/jpeg"}, 400, "invalid_input"),
        ("a PNG named .pdf", fixture("alpha.png"), {"Content-Disposition": 'attachment; filename="card.pdf"'}, 415,
         "unsupported_type"),
        ("HTML", b"<!doctype html><script>alert(1)</script>", {"Content-Type": "text/html"}, 415, "unsupported_type"),
        ("a PDF with JavaScript", b"%PDF-1.4\n1 0 obj << /S /JavaScript /JS (app.alert(1)) >> endobj\n", {}, 400,
         "invalid_input"),
        ("a truncated JPEG", fixture("truncated.jpg"), {"Content-Type": "image/jpeg"}, 400, "invalid_input"),
        # Issue 42's decoding bombs (scripts/derive-image-bombs.py): refused from their headers.
        ("a progressive JPEG of 1,000 scans", fixture("scan-bomb.jpg"), {"Content-Type": "image/jpeg"}, 400, "invalid_input"),
        ("a 16-bit RGBA PNG of 100 MP", fixture("deep.png"), {"Content-Type": "image/png"}, 400, "invalid_input"),
        ("../ in the name", fixture("tiny.pdf"), {"Content-Disposition": 'attachment; filename="../../x.pdf"'}, 400,
         "invalid_input"),
    ]
    for what, data, headers, status, code in cases:
        got, _, body = send(base, "POST", path, data, token, headers)
        assert (got, error_code(body)) == (status, code), (what, got, body)
    assert call(base, "GET", path, token=token).body["items"] == []

    # Interrupted half way: the connection closes mid-body; nothing is stored.
    address = urllib.parse.urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=10) as raw:
        raw.sendall((f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Type: application/pdf\r\nContent-Length: 5000000\r\n\r\n").encode() + b"%PDF-1.4\n" + b"b" * 100000)
    assert call(base, "GET", path, token=token).body["items"] == []

    # 20 uploads at once by one patient: 5 are kept, the rest refused as over the limit (or busy).
    def one(_):
        return send(base, "POST", path, fixture("tiny.pdf"), token, {"Content-Type": "application/pdf"})[0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(one, range(20)))
    assert statuses.count(201) == 5 and all(s in (201, 422, 503) for s in statuses), statuses
    assert len(call(base, "GET", path, token=token).body["items"]) == 5
    assert call(base, "GET", f"/v1/appointments/{mine}", token=token).status == 200, "the server still answers"


def test_decoding_bombs_beside_a_photo_are_refused_and_the_photo_is_kept(world):
    """Issue 42: two scan bombs and two 16-bit PNGs sent at once with an ordinary photo: the
    bombs are refused for the work they would take (before any pixel is decoded, so they hold
    none of the two decoding places), and the photo is stored."""
    base = world["base"]
    token = patient(base, "bomb-files")
    path = f"/v1/appointments/{book(world['clinic'], base, token, world['clinic_id'])}/attachments"
    uploads = [("scan-bomb.jpg", "image/jpeg")] * 2 + [("deep.png", "image/png")] * 2 + [("portrait-exif.jpg", "image/jpeg")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(uploads)) as pool:
        answers = list(pool.map(lambda upload: send(base, "POST", path, fixture(upload[0]), token,
                                                    {"Content-Type": upload[1]}), uploads))
    for (name, _), (status, _, body) in zip(uploads[:4], answers[:4]):
        assert status == 400 and error_code(body) == "invalid_input", (name, status, body)
        assert "too much work" in json.loads(body)["error"]["message"], body
    assert answers[4][0] == 201, answers[4]
    items = call(base, "GET", path, token=token).body["items"]
    assert [(item["contentType"], item["width"], item["height"]) for item in items] == [("image/jpeg", 300, 400)], items


def test_the_same_through_the_command_line(world, tmp_path):
    clinic = world["clinic"]
    clinic.register("dora-files")
    department = clinic.json("departments", str(world["clinic_id"]))[0]["id"]
    day = (datetime.date.today() + datetime.timedelta(days=3)).isoformat()
    slot = clinic.free_slot(department, day, days=7)
    visit = clinic.json("book", "--department", str(department), "--at", slot["start"])["id"]
    photo = tmp_path / "rash.jpg"
    photo.write_bytes(fixture("portrait-exif.jpg"))
    added = clinic.json("appointments", "attach", str(visit), str(photo))
    assert added["name"] == "rash.jpg" and added["contentType"] == "image/jpeg"
    assert [item["id"] for item in clinic.json("appointments", "attachments", str(visit))["items"]] == [added["id"]]
    out = tmp_path / "back.jpg"
    clinic.run("appointments", "attachment", "get", str(visit), str(added["id"]), "--out", str(out))
    kept = out.read_bytes()
    assert len(kept) == added["size"] and b"Exif" not in kept and oct(os.stat(out).st_mode & 0o777) == "0o600"
    # An existing file is never written over; a file over 10 MiB is refused before it is read.
    again = clinic.run("appointments", "attachment", "get", str(visit), str(added["id"]), "--out", str(out), "--json",
                       check=False)
    assert again.returncode == 2 and json.loads(again.stderr)["error"]["code"] == "invalid_input"
    big = tmp_path / "big.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"x" * (11 * 1024 * 1024))
    refused = clinic.run("appointments", "attach", str(visit), str(big), "--json", check=False)
    assert refused.returncode == 2 and json.loads(refused.stderr)["error"]["code"] == "file_too_large"
    named = tmp_path / "photo.pdf"
    named.write_bytes(fixture("alpha.png"))
    refused = clinic.run("appointments", "attach", str(visit), str(named), "--json", check=False)
    assert json.loads(refused.stderr)["error"]["code"] == "unsupported_type"

    clinic.run("messages", "write", "--appointment", str(visit), "Is there parking?")
    clinic.staff("desk-cli", "receptionist", world["clinic_id"])
    threads = clinic.json("staff", "threads")
    assert any(item["appointmentId"] == visit and item["unread"] == 1 for item in threads["items"])
    assert clinic.json("staff", "attachments", "--appointment", str(visit))["items"][0]["id"] == added["id"]
    saved = tmp_path / "desk.jpg"
    clinic.run("staff", "attachments", "get", "--appointment", str(visit), str(added["id"]), "--out", str(saved))
    assert saved.read_bytes() == kept
    clinic.run("staff", "answer", "--appointment", str(visit), "Yes, behind the building.")
    thread = clinic.json("messages", "thread", "--appointment", str(visit))
    assert [m["text"] for m in thread["items"]] == ["Is there parking?", "Yes, behind the building."]
    clinic.run("staff", "close-thread", "--appointment", str(visit))
    assert any(item["appointmentId"] == visit for item in clinic.json("staff", "threads", "--closed")["items"])
    # The retention purge keeps what belongs to visits that have not ended; a bad number is refused.
    kept_all = clinic.json("admin", "attachments", "purge", "--days", "1")
    assert kept_all == {"appointments": 0, "files": 0, "messages": 0, "days": 1}
    assert clinic.json("appointments", "attachments", str(visit))["items"]
    bad = clinic.run("admin", "attachments", "purge", "--days", "0", "--json", check=False)
    assert bad.returncode == 2 and json.loads(bad.stderr)["error"]["code"] == "invalid_input"


def test_in_a_phones_browser_a_photo_reaches_the_front_desk(world, tmp_path):
    """Issue 28's "done when", in headless Chromium: a patient on a 390 px phone attaches a
    photo on a slow link (the progress shows), writes to the clinic; the receptionist finds the
    conversation in the staff inbox, opens the photo (no GPS in what is downloaded) and answers;
    the patient reads the answer and sees the opening in the access log, in English and in
    Russian. axe-core checks every page; a file that is not a photo or a PDF is refused with
    the server's words and nothing is stored."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from test_web import Checked, browser, go, staff_browser

    base, clinic = world["base"], world["clinic"]
    token = patient(base, "web-files")
    visit = book(clinic, base, token, world["clinic_id"])
    photo = tmp_path / "IMG_0042.jpg"
    photo.write_bytes(fixture("portrait-exif.jpg"))
    assert has_gps(photo.read_bytes())

    phone, desk = browser(size=(390, 844)), None
    try:
        phone.set_window_size(390, 844)  # the command line's --window-size is raised to headless Chromium's minimum
        page = Checked(phone)
        page.get(base + "/login")
        phone.find_element(By.ID, "login").send_keys("web-files")
        phone.find_element(By.ID, "password").send_keys(PASSWORD)
        go(phone, phone.find_element(By.CSS_SELECTOR, "form[action='/login'] button"))
        page.get(base + f"/appointments/{visit}")
        field = phone.find_element(By.ID, "file")
        assert field.get_attribute("accept") == "image/*,application/pdf"
        assert field.get_attribute("capture") is not None

        # A slow link (16 KB/s up): the upload's progress is shown while it goes.
        phone.set_network_conditions(offline=False, latency=150, download_throughput=200 * 1024, upload_throughput=16 * 1024)
        field.send_keys(str(photo))
        # Each upload progress event records what the page said then, in sessionStorage (it
        # outlives the reload that follows): the test reads the events, not a moment's text.
        phone.execute_script("""
            var send = XMLHttpRequest.prototype.send;
            XMLHttpRequest.prototype.send = function (body) {
              this.upload.addEventListener("progress", function () {
                var seen = JSON.parse(sessionStorage.getItem("progress-seen") || "[]");
                seen.push(document.getElementById("upload-status").textContent);
                sessionStorage.setItem("progress-seen", JSON.stringify(seen));
              });
              return send.call(this, body);
            };""")
        phone.find_element(By.CSS_SELECTOR, "#upload button[type=submit]").click()
        WebDriverWait(phone, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#files img.thumb"))
        seen = phone.execute_script("return JSON.parse(sessionStorage.getItem('progress-seen') || '[]')")
        assert seen and all(text.endswith("%") for text in seen) and seen[-1].endswith("100%"), seen
        phone.delete_network_conditions()
        WebDriverWait(phone, 30).until(lambda d: d.execute_script(
            "var i = document.querySelector('#files img.thumb'); return i && i.complete && i.naturalWidth > 0"))
        assert "IMG_0042.jpg" in phone.find_element(By.ID, "files").text
        page.audit()
        phone.find_element(By.ID, "text").send_keys("May I bring my daughter?")
        go(phone, phone.find_element(By.CSS_SELECTOR, "#write button"))
        assert "May I bring my daughter?" in phone.find_element(By.CSS_SELECTOR, "ol.thread").text
        assert phone.execute_script("return document.documentElement.scrollWidth") <= 390, phone.execute_script(
            "return Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 390)"
            ".map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 12)")

        # The receptionist: the inbox shows the unread conversation; the photo opens without GPS.
        desk, staff = staff_browser(base, "desk-files")
        go(desk, desk.find_element(By.CSS_SELECTOR, "header a[href='/staff/threads']"))
        staff.audit()
        entry = desk.find_element(By.XPATH, f"//ul[@class='threads']/li[a[@href='/staff/appointments/{visit}#thread']]")
        assert entry.find_element(By.CSS_SELECTOR, ".badge").text.startswith("1")
        # Issue 46: each conversation names its patient and quotes the first words of the latest message.
        assert entry.find_element(By.CSS_SELECTOR, ".thread-patient").text == "Anna Smith"
        assert entry.find_element(By.CSS_SELECTOR, ".thread-preview").text == "May I bring my daughter?"
        go(desk, entry.find_element(By.TAG_NAME, "a"))
        staff.audit()
        assert desk.find_element(By.ID, "patient-name").text == "Anna Smith"
        assert "May I bring my daughter?" in desk.find_element(By.CSS_SELECTOR, "ol.thread").text
        href = desk.find_element(By.CSS_SELECTOR, "#files a[download]").get_attribute("href")
        cookie = "clinic_staff=" + desk.get_cookie("clinic_staff")["value"]
        address = urllib.parse.urlsplit(href)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        connection.request("GET", address.path, headers={"Cookie": cookie})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        assert response.status == 200 and data[:3] == b"\xff\xd8\xff", (response.status, data[:200])
        assert b"Exif" not in data and not has_gps(data)
        assert response.getheader("X-Content-Type-Options") == "nosniff"
        desk.find_element(By.ID, "text").send_keys("Yes, of course.")
        go(desk, desk.find_element(By.CSS_SELECTOR, "#answer button"))
        assert "Yes, of course." in desk.find_element(By.CSS_SELECTOR, "ol.thread").text

        # The patient reads the answer, and sees who opened the photo.
        page.get(base + f"/appointments/{visit}")
        messages = [item.text for item in phone.find_elements(By.CSS_SELECTOR, "ol.thread li")]
        assert len(messages) == 2 and "May I bring my daughter?" in messages[0] and "Yes, of course." in messages[1], messages
        page.get(base + "/profile/access-log")
        opened = phone.find_elements(By.CSS_SELECTOR, f"#access-log tr[data-action='attachment.open']")
        assert opened and "Receptionist" in opened[0].text and "Opened a file" in opened[0].text and str(visit) in opened[0].text
        page.get(base + "/profile/access-log?lang=ru")
        assert "Открыл(а) файл" in phone.find_element(By.ID, "access-log").text
        page.get(base + f"/appointments/{visit}")
        assert phone.find_element(By.ID, "files-title").text == "Файлы"
        assert phone.find_element(By.ID, "thread-title").text == "Переписка с клиникой"

        # A page that is no photo is refused with the server's words; nothing more is stored.
        page.get(base + f"/appointments/{visit}?lang=en")
        bad = tmp_path / "note.html"
        bad.write_text("<html><script>alert(1)</script></html>")
        phone.find_element(By.ID, "file").send_keys(str(bad))
        phone.find_element(By.CSS_SELECTOR, "#upload button[type=submit]").click()
        WebDriverWait(phone, 30).until(lambda d: "error" in (d.find_element(By.ID, "upload-status").get_attribute("class") or ""))
        assert "Only photos" in phone.find_element(By.ID, "upload-status").text
        assert len(call(base, "GET", f"/v1/appointments/{visit}/attachments", token=token).body["items"]) == 1
    finally:
        phone.quit()
        if desk is not None:
            desk.quit()


def test_a_flooded_conversation_is_refused_and_paged_in_the_browser(world):
    """Issue 42, item 7, in headless Chromium: after ten messages in ten minutes the patient's
    next one (the form, as a browser sends it) is refused with the library's words and nothing
    stored; a conversation of 25 messages shows its latest 20 on both sides, with a link to the
    earlier ones and back. axe-core checks every page."""
    from selenium.webdriver.common.by import By
    from test_web import Checked, browser, go, staff_browser

    base, clinic, desk_token = world["base"], world["clinic"], world["desk"]
    token = patient(base, "web-flood")
    visit = book(clinic, base, token, world["clinic_id"])
    for n in range(1, 11):
        assert call(base, "POST", f"/v1/appointments/{visit}/messages", {"text": f"question {n}"}, token=token).status == 201
    refused = call(base, "POST", f"/v1/appointments/{visit}/messages", {"text": "question 11"}, token=token)
    assert refused.status == 429 and refused.body["error"]["code"] == "rate_limited", refused.body
    for n in range(11, 26):
        reply = call(base, "POST", f"/v1/staff/appointments/{visit}/messages", {"text": f"answer {n}"}, token=desk_token)
        assert reply.status == 201, reply.body

    def shown(driver):
        return [item.find_element(By.CSS_SELECTOR, "p.text").text for item in driver.find_elements(By.CSS_SELECTOR, "ol.thread li")]

    phone, desk = browser(size=(390, 844)), None
    try:
        phone.set_window_size(390, 844)
        page = Checked(phone)
        page.get(base + "/login")
        phone.find_element(By.ID, "login").send_keys("web-flood")
        phone.find_element(By.ID, "password").send_keys(PASSWORD)
        go(phone, phone.find_element(By.CSS_SELECTOR, "form[action='/login'] button"))
        page.get(base + f"/appointments/{visit}")
        assert shown(phone) == [f"question {n}" for n in range(6, 11)] + [f"answer {n}" for n in range(11, 26)], shown(phone)
        page.audit()
        go(phone, phone.find_element(By.ID, "earlier-messages"))
        assert shown(phone) == [f"question {n}" for n in range(1, 6)], shown(phone)
        assert not phone.find_elements(By.ID, "earlier-messages")
        page.audit()
        go(phone, phone.find_element(By.ID, "latest-messages"))
        assert shown(phone)[-1] == "answer 25"
        # The eleventh message in ten minutes, through the form: refused, in the page's words.
        before = len(call(base, "GET", f"/v1/appointments/{visit}/messages?limit=100", token=token).body["items"])
        phone.find_element(By.ID, "text").send_keys("Hello?")
        go(phone, phone.find_element(By.CSS_SELECTOR, "#write button"))
        assert "Too many messages at once" in phone.find_element(By.TAG_NAME, "main").text
        assert len(call(base, "GET", f"/v1/appointments/{visit}/messages?limit=100", token=token).body["items"]) == before

        desk, staff = staff_browser(base, "desk-files")
        staff.get(base + f"/staff/appointments/{visit}")
        assert len(shown(desk)) == 20 and shown(desk)[-1] == "answer 25", shown(desk)
        go(desk, desk.find_element(By.ID, "earlier-messages"))
        assert shown(desk) == [f"question {n}" for n in range(1, 6)], shown(desk)
        staff.audit()
    finally:
        phone.quit()
        if desk is not None:
            desk.quit()
