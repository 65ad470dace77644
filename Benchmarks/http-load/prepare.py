"""Prepares the HTTP booking benchmark against a running `clinic serve`: registers and logs in
PATIENTS patients, gathers free slots of many departments (31 days), and gives each slot to a
patient who has nothing else at that time (greedy interval colouring), so that every request
of the uncontended run can succeed. Writes:
  requests.txt   token departmentId start doctorId   (distinct slots, uncontended)
  contended.txt  the same for 20 doctors' first slots, each wanted by 8 patients
Usage: prepare.py URL FOLDER PATIENTS SLOTS"""
import concurrent.futures, heapq, json, sys, urllib.request
from datetime import datetime, timedelta

url, folder, patients, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
PASSWORD = "correct horse battery staple"

def call(method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method)
    if data is not None: request.add_header("Content-Type", "application/json")
    if token: request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")

def patient(i):
    login = f"bench{i}"
    call("POST", "/v1/patients", {"login": login, "password": PASSWORD, "name": "Bench", "surname": "Patient",
                                   "street": "Main St", "house": str(i + 1), "city": "Boston", "acceptPrivacy": True})
    return call("POST", "/v1/sessions", {"login": login, "password": PASSWORD})["token"]

# The first patient alone: on a new PostgreSQL store the first registration makes the
# personal-data key file, and two first registrations at once can race for it (one answered
# 500 key_error); after it, the rest eight at a time.
tokens = [patient(0)]
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    tokens += list(pool.map(patient, range(1, patients)))

def parse(text): return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")

# Only slots that start two hours from now or later. The earliest free slot of each doctor is
# the first past the booking lead time (30 minutes) when this runs; a minute later, in the
# run, it can be inside it: every doctor's first slot is on the same 20-minute grid, so the
# contended run's 160 requests were all 422 slot_unavailable at once (issue 42's "bad" answers,
# one run in two: whether a grid boundary fell between preparing and booking).
earliest = datetime.utcnow() + timedelta(hours=2)

slots = []  # (start, end, department, doctor, start text)
clinic_id = 0
while len(slots) < wanted * 1.3:
    clinic_id += 1
    try:
        departments = call("GET", f"/v1/clinics/{clinic_id}/departments")
    except urllib.error.HTTPError:
        continue
    for department in departments:
        for slot in call("GET", f"/v1/departments/{department['id']}/slots?days=31"):
            if slot["isAvailable"] and parse(slot["start"]) >= earliest:
                slots.append((parse(slot["start"]), parse(slot["end"]), department["id"], slot["doctorId"], slot["start"]))

# Contended: 20 doctors' first free slots, 8 patients each (kept out of the uncontended run).
by_doctor = {}
for slot in sorted(slots):
    by_doctor.setdefault(slot[3], slot)
contended_slots = list(by_doctor.values())[:20]
taken = set((s[3], s[4]) for s in contended_slots)
with open(f"{folder}/contended.txt", "w") as out:
    for index, slot in enumerate(contended_slots):
        for k in range(8):
            out.write(f"{tokens[(index * 8 + k) % len(tokens)]} {slot[2]} {slot[4]} {slot[3]}\n")

# Uncontended: each slot to a patient free then (the one free the longest).
free = [(datetime.min, i) for i in range(len(tokens))]
heapq.heapify(free)
lines = []
for start, end, department, doctor, text in sorted(s for s in slots if (s[3], s[4]) not in taken):
    if free[0][0] > start: continue
    _, who = heapq.heappop(free)
    heapq.heappush(free, (end, who))
    lines.append(f"{tokens[who]} {department} {text} {doctor}")
    if len(lines) >= wanted: break
# Spread the patients over the run (a patient's requests not all at once).
lines.sort(key=lambda line: hash(line) % 1000003)
with open(f"{folder}/requests.txt", "w") as out:
    out.write("\n".join(lines) + "\n")
print(f"prepared {len(tokens)} patients, {len(lines)} slots, {len(contended_slots)} contended slots", file=sys.stderr)
