"""E-mail through a real SMTP server (aiosmtpd on 127.0.0.1): a booking, a reschedule, a
clinic's cancellation and a reminder arrive once each, in the patient's language, with the
calendar event attached where there is one; a server that is down is retried; a process
killed between the server's 250 and the mark sends the message once more at most, with the
same Message-ID; a stopped `clinic serve` sends what is waiting when it starts again."""
import os
import signal
import subprocess
import time
from datetime import datetime, timezone

from conftest import CLINIC_BIN, Server, calendar_parts, code_from, text_part
from icscheck import starts, utc

DIRECTORY = """external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
NYC,Bellevue Hospital,462 First Avenue,New York,NY,40.7390,-73.9754,GENERAL ACUTE CARE,0,1,
"""


def setup_patient(clinic, smtp, tmp_path, language=None):
    """A directory of one clinic, a patient with a confirmed address; returns the department."""
    path = os.path.join(str(tmp_path), "directory.csv")
    with open(path, "w") as handle:
        handle.write(DIRECTORY)
    clinic.run("init", "--empty")
    clinic.run("admin", "import-clinics", path, "--demo")
    clinic.register("anna", language=language)
    clinic.run("profile", "email", "set", "anna@example.org")
    report = clinic.json("admin", "deliver", env=smtp.env)
    assert report["sent"] == 1
    (_, recipients, message), = smtp.mailbox.snapshot()
    assert recipients == ["anna@example.org"]
    clinic.run("profile", "email", "confirm", code_from(message))
    assert clinic.json("profile", "email")["email"] == "anna@example.org"
    clinic_id = clinic.json("clinics", "list")[0]["id"]
    return clinic_id, clinic.json("departments", str(clinic_id))[0]["id"]


def days_ahead(days):
    return datetime.fromtimestamp(time.time() + days * 86400, tz=timezone.utc).strftime("%Y-%m-%d")


def offset_until(instant, hours_before):
    """A faketime offset that puts the clock `hours_before` hours before `instant`."""
    return "+%ds" % int((utc(instant) - datetime.now(timezone.utc)).total_seconds() - hours_before * 3600)


def test_each_change_arrives_once_in_the_patients_language(clinic, smtp, tmp_path):
    clinic_id, department = setup_patient(clinic, smtp, tmp_path, language="ru")
    server = Server(clinic, smtp.env)
    try:
        first = clinic.free_slot(department, days_ahead(3), days=5)
        booked = clinic.json("book", "--department", str(department), "--at", first["start"])
        mail = smtp.mailbox.wait_for(2)[1][2]
        assert str(mail["subject"]).startswith("Вы записаны на приём")
        assert "Bellevue Hospital" in text_part(mail) and "Номер записи: %d" % booked["id"] in text_part(mail)
        (ics,) = calendar_parts(mail)
        booked_events = starts(ics)
        (start, sequence, status), = booked_events.values()
        assert (start, sequence, status) == (utc(booked["start"]), 0, "CONFIRMED")

        later = [s for s in clinic.json("slots", "--department", str(department), "--from", days_ahead(4), "--days", "5")
                 if s["isAvailable"]][0]
        moved = clinic.json("reschedule", str(booked["id"]), "--to", later["start"])
        mail = smtp.mailbox.wait_for(3)[2][2]
        assert str(mail["subject"]).startswith("Запись перенесена")
        moved_events = starts(calendar_parts(mail)[0])
        # The same event (UID) with a higher SEQUENCE: calendar apps replace it (issue 55).
        assert list(moved_events) == list(booked_events)
        (start, sequence, _), = moved_events.values()
        assert (start, sequence) == (utc(moved["start"]), 1)

        clinic.staff("desk", "receptionist", clinic_id)
        clinic.run("staff", "appointment", "cancel", str(booked["id"]), "--reason", "Врач заболел")
        mail = smtp.mailbox.wait_for(4)[3][2]
        assert str(mail["subject"]).startswith("Клиника отменила вашу запись")
        assert "Причина: Врач заболел" in text_part(mail)
        (_, sequence, status), = starts(calendar_parts(mail)[0]).values()
        assert (sequence, status) == (2, "CANCELLED")

        # A reminder, a day before an appointment booked three days ahead: written and sent
        # by `admin deliver` with the clock moved (the server's own clock is not due yet).
        second = clinic.json("book", "--department", str(department), "--at", first["start"])
        smtp.mailbox.wait_for(5)
        for _ in range(2):
            clinic.run("admin", "deliver", env=smtp.env, at=offset_until(second["start"], 23.5))
        mails = smtp.mailbox.wait_for(6)
        time.sleep(2.5)  # two rounds of the server's worker: nothing more may come
    finally:
        server.stop()
    mails = smtp.mailbox.snapshot()
    subjects = [str(m["subject"]) for _, _, m in mails]
    assert len(mails) == 6, subjects
    assert subjects[5].startswith("Напоминание: приём")
    assert "до приёма 24 часа" in text_part(mails[5][2]) or "до приёма 23 часа" in text_part(mails[5][2])
    assert calendar_parts(mails[5][2]) == []
    assert len({str(m["message-id"]) for _, _, m in mails}) == 6
    assert all(recipients == ["anna@example.org"] for _, recipients, _ in mails)
    messages = clinic.json("messages")
    assert [m["kind"] for m in messages] == ["reminder", "booked", "clinic_cancelled", "rescheduled", "booked"]


def test_a_mail_server_down_at_first_is_retried(clinic, smtp, tmp_path):
    _, department = setup_patient(clinic, smtp, tmp_path)
    smtp.stop()
    slot = clinic.free_slot(department, days_ahead(2), days=5)
    clinic.json("book", "--department", str(department), "--at", slot["start"])
    report = clinic.json("admin", "deliver", env=smtp.env)
    assert (report["sent"], report["retrying"]) == (0, 1)
    smtp.start()
    assert clinic.json("admin", "deliver", env=smtp.env)["sent"] == 0  # backing off for a minute
    assert clinic.json("admin", "deliver", env=smtp.env, at="+90s")["sent"] == 1
    assert clinic.json("admin", "deliver", env=smtp.env, at="+1h")["sent"] == 0
    mails = smtp.mailbox.snapshot()
    assert [str(m["subject"]).split(":")[0] for _, _, m in mails] == ["Your confirmation code", "Appointment booked"]


def test_a_kill_between_the_250_and_the_mark_sends_one_copy_more_at_most(clinic, smtp, tmp_path):
    _, department = setup_patient(clinic, smtp, tmp_path)
    slot = clinic.free_slot(department, days_ahead(2), days=5)
    clinic.json("book", "--department", str(department), "--at", slot["start"])
    smtp.mailbox.stored.clear()
    smtp.mailbox.hold = 10
    process = subprocess.Popen([CLINIC_BIN, "admin", "deliver"], env=dict(clinic.env, **smtp.env),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert smtp.mailbox.stored.wait(30), "the message never reached the server"
    process.send_signal(signal.SIGKILL)
    process.wait()
    smtp.mailbox.hold = 0
    # The attempt was counted before sending: the next one waits for the back-off.
    assert clinic.json("admin", "deliver", env=smtp.env)["sent"] == 0
    assert clinic.json("admin", "deliver", env=smtp.env, at="+90s")["sent"] == 1
    assert clinic.json("admin", "deliver", env=smtp.env, at="+2h")["sent"] == 0
    booked = [m for _, _, m in smtp.mailbox.snapshot() if str(m["subject"]).startswith("Appointment booked")]
    assert len(booked) == 2, "one copy from the killed process, one from the retry"
    assert booked[0]["message-id"] == booked[1]["message-id"]


def test_a_stopped_server_sends_what_waits_when_it_starts(clinic, smtp, tmp_path):
    _, department = setup_patient(clinic, smtp, tmp_path)
    slot = clinic.free_slot(department, days_ahead(2), days=5)
    clinic.json("book", "--department", str(department), "--at", slot["start"])  # no server runs
    assert len(smtp.mailbox.snapshot()) == 1
    for _ in range(2):
        server = Server(clinic, smtp.env)
        try:
            smtp.mailbox.wait_for(2)
            time.sleep(2.5)
        finally:
            server.stop()
    assert len(smtp.mailbox.snapshot()) == 2


def make_certificate(folder):
    """A self-signed certificate for 127.0.0.1 (the test's own CA), made with openssl."""
    key, cert = os.path.join(folder, "smtp-key.pem"), os.path.join(folder, "smtp-cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return key, cert


def test_a_password_goes_only_over_tls(clinic, smtp, tmp_path):
    import ssl
    from conftest import SMTPServer
    _, department = setup_patient(clinic, smtp, tmp_path)
    slot = clinic.free_slot(department, days_ahead(2), days=5)
    clinic.json("book", "--department", str(department), "--at", slot["start"])
    # A server without STARTTLS: with a user and password the message is not sent at all.
    clear = dict(smtp.env, CLINIC_SMTP_URL=f"smtp://mailer:s3cret@127.0.0.1:{smtp.port}")
    report = clinic.json("admin", "deliver", env=clear)
    assert (report["sent"], report["retrying"]) == (0, 1)
    assert len(smtp.mailbox.snapshot()) == 1  # the confirmation code only
    # A server with STARTTLS and AUTH: the certificate is checked against CLINIC_SMTP_CA_FILE.
    key, cert = make_certificate(str(tmp_path))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    secure = SMTPServer(tls_context=context, credentials=("mailer", "s3cret"))
    secure.start()
    try:
        tls = {"CLINIC_SMTP_URL": f"smtp://mailer:s3cret@127.0.0.1:{secure.port}", "CLINIC_MAIL_FROM": "clinic@example.org"}
        untrusted = clinic.json("admin", "deliver", env=tls, at="+90s")
        assert untrusted["sent"] == 0, "a certificate no CA vouches for is refused"
        wrong = dict(tls, CLINIC_SMTP_URL=f"smtp://mailer:wrong@127.0.0.1:{secure.port}", CLINIC_SMTP_CA_FILE=cert)
        assert clinic.json("admin", "deliver", env=wrong, at="+5m")["sent"] == 0
        trusted = clinic.json("admin", "deliver", env=dict(tls, CLINIC_SMTP_CA_FILE=cert), at="+20m")
        assert trusted["sent"] == 1
        (_, recipients, message), = secure.mailbox.snapshot()
        assert recipients == ["anna@example.org"] and str(message["subject"]).startswith("Appointment booked")
        assert ("mailer", "wrong") in secure.logins and ("mailer", "s3cret") in secure.logins
    finally:
        secure.stop()


def test_an_address_is_added_and_confirmed_on_the_web(clinic, smtp, tmp_path):
    """Issue 30's profile on the web: a patient adds an e-mail address, the six-digit code
    arrives through the real SMTP server, typed on the profile page it confirms the address;
    a wrong code is refused and changes nothing; the address can be removed."""
    from selenium.webdriver.common.by import By
    from test_web import Checked, browser, go, log_in
    path = os.path.join(str(tmp_path), "directory.csv")
    with open(path, "w") as handle:
        handle.write(DIRECTORY)
    clinic.run("init", "--empty")
    clinic.run("admin", "import-clinics", path, "--demo")
    clinic.register("webmail")
    server = Server(clinic, smtp.env)
    driver = browser(size=(390, 844))
    page = Checked(driver)
    try:
        log_in(driver, server.url, "webmail")
        page.get(server.url + "/profile")
        assert driver.find_elements(By.ID, "email-none")
        driver.find_element(By.ID, "address").send_keys("webmail@example.org")
        go(driver, driver.find_element(By.CSS_SELECTOR, "#email-set button"))
        page.audit()
        assert "webmail@example.org" in driver.find_element(By.CSS_SELECTOR, "p.notice").text
        smtp.mailbox.wait_for(1)
        (_, recipients, message), = smtp.mailbox.snapshot()
        assert recipients == ["webmail@example.org"]
        code = code_from(message)
        wrong = "000000" if code != "000000" else "111111"
        driver.find_element(By.ID, "code").send_keys(wrong)
        go(driver, driver.find_element(By.CSS_SELECTOR, "#email-confirm button"))
        assert driver.find_elements(By.CSS_SELECTOR, "p.error[role=alert]") and driver.find_elements(By.ID, "email-none")
        driver.find_element(By.ID, "code").send_keys(code)
        go(driver, driver.find_element(By.CSS_SELECTOR, "#email-confirm button"))
        page.audit()
        assert "webmail@example.org" in driver.find_element(By.ID, "email-current").text
        assert clinic.json("profile", "email")["email"] == "webmail@example.org"
        go(driver, driver.find_element(By.CSS_SELECTOR, "#email-remove button"))
        assert driver.find_elements(By.ID, "email-none")
    finally:
        driver.quit()
        server.stop()
    assert clinic.json("profile", "email").get("email") is None
