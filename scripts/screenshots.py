#!/usr/bin/env python3
"""Writes PNG screenshots of the web app's main pages at 390x844 (a phone) and 1280x800 into
docs/screenshots/, from `clinic serve` on a throw-away database with the default directory.
Run by scripts/screenshots.sh, which makes the virtual environment."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "python"))
from conftest import PASSWORD, STAFF_PASSWORD, Clinic, Server  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from test_web import browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "screenshots")


def staff_login(driver, server, login):
    """A staff member signed in, in place of whoever was (the cookies cleared first)."""
    driver.delete_all_cookies()
    driver.get(server.url + "/staff")
    driver.find_element(By.ID, "login").send_keys(login)
    driver.find_element(By.ID, "password").send_keys(STAFF_PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form[action='/staff/login'] button").click()
    # Signed in once the log-in form is gone (the next address would beat the post).
    WebDriverWait(driver, 30).until(lambda d: not d.find_elements(By.ID, "login"))


def main():
    os.makedirs(OUT, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="clinic-shots-")
    clinic = Clinic(folder)
    clinic.run("init")
    clinic.register("maria", city="Boston, MA")
    nearest = clinic.json("clinics", "nearest", "--me", "--limit", "1")[0]
    department = clinic.json("departments", str(nearest["id"]))[0]["id"]
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 3 * 86400))
    slot = clinic.free_slot(department, day, days=7)
    booked = clinic.json("book", "--department", str(department), "--at", slot["start"], "--notes", "A cough for two weeks")
    later = [s for s in clinic.json("slots", "--department", str(department), "--from", slot["start"][:10], "--days", "7")
             if s["isAvailable"] and s["start"] > slot["start"]][0]
    clinic.run("admin", "staff", "add", "--login", "desk", "--name", "Kim", "--surname", "Park", "--role", "receptionist",
               "--clinic", str(nearest["id"]), "--password-stdin", stdin=STAFF_PASSWORD + "\n")
    clinic.run("admin", "staff", "add", "--login", "boss", "--name", "Ann", "--surname", "Wu", "--role", "clinic-admin",
               "--clinic", str(nearest["id"]), "--password-stdin", stdin=STAFF_PASSWORD + "\n")
    with open(clinic.env["CLINIC_SESSION"]) as handle:
        token = handle.read().strip()
    server = Server(clinic)
    try:
        for width, height in [(390, 844), (1280, 800)]:
            driver = browser(size=(width, height))
            try:
                driver.set_window_size(max(width, 500), height)
                # Headless Chromium lays out no narrower than 500 px: a phone's width is emulated.
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                       {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
                driver.get(server.url + "/register")
                driver.save_screenshot(os.path.join(OUT, "register-%d.png" % width))
                driver.get(server.url + "/")
                driver.add_cookie({"name": "clinic_session", "value": token, "path": "/"})
                pages = [
                    ("menu", "/"),
                    ("nearest-map", "/clinics/nearest?me=1"),
                    ("clinic", "/clinics/%d" % nearest["id"]),
                    ("booking", "/clinics/%d/book?department=%d&day=%s" % (nearest["id"], department, slot["start"][:10])),
                    ("booking-summary", "/clinics/%d/book/summary?department=%d&doctor=%d&start=%s"
                     % (nearest["id"], department, later["doctorId"], later["start"])),
                    ("appointment", "/appointments/%d?booked=1" % booked["id"]),
                    ("appointment-reschedule", "/appointments/%d#reschedule" % booked["id"]),
                    ("profile", "/profile"),
                    ("messages", "/messages"),
                ]
                for name, path in pages:
                    driver.get(server.url + path)
                    if name == "nearest-map":
                        # The detail of the states in view (county lines, place names), labelled.
                        WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "map").get_attribute("data-labelled"))
                    driver.save_screenshot(os.path.join(OUT, "%s-%d.png" % (name, width)))
                staff_login(driver, server, "desk")
                driver.get(server.url + "/staff?date=" + slot["start"][:10])
                driver.save_screenshot(os.path.join(OUT, "staff-day-%d.png" % width))
                driver.get(server.url + "/staff/calendar?from=" + slot["start"][:10])
                driver.save_screenshot(os.path.join(OUT, "staff-calendar-%d.png" % width))
                driver.get(server.url + "/staff/calendar?days=7&from=" + slot["start"][:10])
                driver.save_screenshot(os.path.join(OUT, "staff-week-%d.png" % width))
                staff_login(driver, server, "boss")
                driver.get(server.url + "/staff/report?month=" + slot["start"][:7])
                driver.save_screenshot(os.path.join(OUT, "staff-report-%d.png" % width))
            finally:
                driver.quit()
    finally:
        server.stop()
    print("screenshots in", OUT)
    _ = PASSWORD


if __name__ == "__main__":
    main()
