import Foundation
import HTTPTypes
import Testing

/// The staff API (/v1/staff), in process: every staff route with every role, a
/// patient's token and none; another clinic's data is 404, a role's limit 403.
@Suite struct StaffAPITestsInProcess {
    static let staffPassword = "kettle-harbor-lantern"

    struct Setup {
        let server: InProcessServer
        let patient: String
        let appointment: Int
        let tokens: [String: String]
        let accountIds: [String: Int]
        let monday: String
        let department: Int
        let doctor: Int
        let otherDoctor: Int
    }

    /// A booking at the first clinic; a clinic admin, a receptionist, the booked doctor and
    /// another doctor there, and a clinic admin of the Reno clinic, each logged in.
    static func makeWorld(_ server: InProcessServer) async throws -> Setup {
        let patient = try await server.patient("stafftest")
        let (_, clinicId) = try await server.department()
        // A department with two doctors (the demo's therapy and pediatrics have two).
        var department = 0
        for candidate in try await server.send(.GET, "/v1/clinics/\(clinicId)/departments").array.compactMap({ $0["id"] as? Int }) {
            if try await server.send(.GET, "/v1/departments/\(candidate)/doctors").array.count >= 2 { department = candidate; break }
        }
        #expect(department != 0)
        // Not today: the tests check that a visit is not checked in before its day.
        let start = try await server.freeSlotAfterToday(department, clinicId: clinicId)
        let doctors = try await server.send(.GET, "/v1/departments/\(department)/doctors")
        let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: patient)
        #expect(booked.status == 201, "\(booked.text)")
        let appointment = try #require(booked.object["id"] as? Int), doctor = try #require(booked.object["doctorId"] as? Int)
        let otherDoctor = try #require(doctors.array.compactMap { $0["id"] as? Int }.first { $0 != doctor })
        let clinics = try await server.send(.GET, "/v1/clinics?limit=100")
        let reno = try #require((clinics.object["items"] as? [[String: Any]])?.first { $0["name"] as? String == "Renown Regional" }?["id"] as? Int)
        var tokens: [String: String] = [:], ids: [String: Int] = [:]
        for (login, role, clinic, doctorId) in [("admin-a", "clinic-admin", clinicId, nil), ("desk-a", "receptionist", clinicId, nil),
                                                 ("doctor-a", "doctor", clinicId, doctor), ("doctor-a2", "doctor", clinicId, otherDoctor),
                                                 ("admin-b", "clinic-admin", reno, nil)] as [(String, String, Int, Int?)] {
            var arguments = ["admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                             "--clinic", String(clinic), "--password-stdin", "--json"]
            if let doctorId { arguments += ["--doctor", String(doctorId)] }
            let added = try server.cli(arguments, input: Self.staffPassword + "\n")
            #expect(added.status == 0, "\(added.stderr)")
            ids[login] = (try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])?["id"] as? Int
            let session = try await server.send(.POST, "/v1/staff/sessions", json: ["login": login, "password": Self.staffPassword])
            #expect(session.status == 201, "\(session.text)")
            tokens[login] = session.object["token"] as? String
            #expect((session.object["staff"] as? [String: Any])?["role"] as? String == role)
        }
        let monday = try await server.localDay(of: start, clinicId: clinicId)
        return Setup(server: server, patient: patient, appointment: appointment, tokens: tokens, accountIds: ids, monday: monday,
                     department: department, doctor: doctor, otherDoctor: otherDoctor)
    }

    @Test func everyStaffRouteWithEveryRole() async throws {
        try await InProcessServer.run { server in
            let s = try await Self.makeWorld(server)
            let id = s.appointment
            let slot = try await s.server.freeSlot(s.department, skipping: 1) // not the booked time
            // (method, path, body): every staff route but log-in and log-out.
            let routes: [(HTTPRequest.Method, String, [String: Any]?)] = [
                (.GET, "/v1/staff/me", nil),
                (.GET, "/v1/staff/schedule?date=\(s.monday)", nil),
                (.POST, "/v1/staff/appointments/\(id)/check-in", nil),
                (.POST, "/v1/staff/appointments/\(id)/start", nil),
                (.POST, "/v1/staff/appointments/\(id)/complete", nil),
                (.POST, "/v1/staff/appointments/\(id)/no-show", nil),
                (.POST, "/v1/staff/appointments/\(id)/cancel", ["reason": "Dr. Thompson is ill"]),
                (.GET, "/v1/staff/accounts", nil),
                (.POST, "/v1/staff/accounts", ["login": "new-desk", "name": "Kim", "surname": "Park", "role": "receptionist",
                                               "password": Self.staffPassword]),
                (.POST, "/v1/staff/accounts/\(s.accountIds["doctor-a2"] ?? 0)/disable", nil),
                (.POST, "/v1/staff/appointments", ["patientLogin": "stafftest", "departmentId": s.department, "start": slot]),
                (.GET, "/v1/staff/doctors", nil),
                (.POST, "/v1/staff/doctors", ["departmentId": s.department, "name": "Ada Park"]),
                (.GET, "/v1/staff/doctors/\(s.doctor)/hours", nil),
                (.POST, "/v1/staff/doctors/\(s.doctor)/hours", ["weekday": 7, "off": true]),
                (.GET, "/v1/staff/doctors/\(s.doctor)/exceptions", nil),
                (.POST, "/v1/staff/doctors/\(s.doctor)/exceptions", ["date": "2030-01-02", "off": true]),
                (.DELETE, "/v1/staff/exceptions/1", nil),
                (.GET, "/v1/staff/departments/\(s.department)/visit-types", nil),
                (.POST, "/v1/staff/visit-types", ["departmentId": s.department, "nameEn": "Follow-up", "nameRu": "Повторный",
                                                  "durationMinutes": 40]),
                (.POST, "/v1/staff/visit-types/1", ["nameEn": "Follow-up", "nameRu": "Повторный", "durationMinutes": 40]),
                (.DELETE, "/v1/staff/visit-types/1", nil),
                (.POST, "/v1/staff/doctors/\(s.otherDoctor)/deactivate", [String: Any]()),
            ]
            // Nobody and a patient: 401 everywhere.
            for (method, path, body) in routes {
                let anonymous = try await s.server.send(method, path, json: body)
                #expect(anonymous.status == 401, "\(method) \(path): \(anonymous.text)")
                let patient = try await s.server.send(method, path, json: body, token: s.patient)
                #expect(patient.status == 401, "patient \(method) \(path): \(patient.text)")
            }
            // What each role may not do, by route index: 403 (role) or 404 (another clinic / doctor).
            let refused: [String: [Int: Int]] = [
                "admin-b": [1: 200, 2: 404, 3: 404, 4: 404, 5: 404, 6: 404, 9: 404, 10: 404, 11: 200, 12: 404, 13: 404, 14: 404,
                            15: 404, 16: 404, 17: 404, 18: 404, 19: 404, 20: 404, 21: 404, 22: 404],
                "desk-a": [3: 403, 4: 403, 7: 403, 8: 403, 9: 403, 11: 200, 12: 403, 13: 200, 14: 403, 15: 200, 16: 403, 17: 404,
                           18: 200, 19: 403, 20: 404, 21: 404, 22: 403],
                "doctor-a2": [2: 404, 3: 404, 4: 404, 5: 404, 6: 404, 7: 403, 8: 403, 9: 403, 10: 403, 12: 403, 14: 403, 16: 403, 19: 403,
                              22: 403],
                "doctor-a": [2: 403, 5: 403, 6: 403, 7: 403, 8: 403, 9: 403, 10: 403, 12: 403, 14: 403, 16: 403, 19: 403, 22: 403],
            ]
            for (login, expected) in refused {
                let token = try #require(s.tokens[login])
                for (index, status) in expected {
                    let (method, path, body) = routes[index]
                    let reply = try await s.server.send(method, path, json: body, token: token)
                    #expect(reply.status == status, "\(login) \(method) \(path): \(reply.text)")
                }
            }
            // Another clinic's admin sees an empty day.
            let otherClinic = try await s.server.send(.GET, "/v1/staff/schedule?date=\(s.monday)", token: s.tokens["admin-b"])
            #expect(otherClinic.status == 200, "\(otherClinic.text)")
            #expect((otherClinic.object["items"] as? [[String: Any]])?.count == 0)
            // The allowed path, in order: the receptionist checks in, the doctor starts.
            let desk = try #require(s.tokens["desk-a"]), doctor = try #require(s.tokens["doctor-a"])
            let day = try await s.server.send(.GET, "/v1/staff/schedule?date=\(s.monday)", token: desk, headers: ["X-Request-Id": "audit-me-1"])
            #expect(day.status == 200, "\(day.text)")
            let items = try #require(day.object["items"] as? [[String: Any]])
            #expect(items.compactMap { $0["id"] as? Int } == [id])
            #expect(items.first?["patientName"] as? String == "Anna Smith")
            // Days before the visit: no check-in (issue 42), 422 with its code; on the day, checked in.
            let early = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/check-in", token: desk)
            #expect(early.status == 422 && early.errorCode == "invalid_transition", "\(early.text)")
            try s.server.plantToday(id)
            let arrived = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/check-in", token: desk)
            #expect(arrived.object["status"] as? String == "arrived", "\(arrived.text)")
            // A check-in by mistake is undone by the front desk (not the doctor), then done again.
            let notTheDoctors = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/undo-check-in", token: doctor)
            #expect(notTheDoctors.status == 403, "\(notTheDoctors.text)")
            let undone = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/undo-check-in", token: desk)
            #expect(undone.object["status"] as? String == "scheduled", "\(undone.text)")
            let rearrived = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/check-in", token: desk)
            #expect(rearrived.object["status"] as? String == "arrived", "\(rearrived.text)")
            let started = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/start", token: doctor)
            #expect(started.object["status"] as? String == "in_progress", "\(started.text)")
            let again = try await s.server.send(.POST, "/v1/staff/appointments/\(id)/check-in", token: desk)
            #expect(again.status == 422, "\(again.text)")
            #expect((again.object["error"] as? [String: Any])?["code"] as? String == "invalid_transition")
            // The patient reads it; the audit row carries the request id (the patient does not see it).
            let log = try await s.server.send(.GET, "/v1/me/access-log", token: s.patient)
            #expect(log.array.first?["action"] as? String == "appointment.start")
            #expect(log.array.contains { $0["role"] as? String == "receptionist" && $0["action"] as? String == "patient.read" })
            #expect(try s.server.text("SELECT request_id FROM audit_events WHERE action = 'patient.read' AND role = 'receptionist'") == "audit-me-1")
            // A clinic admin manages accounts: adds one, disables the other doctor (its session ends).
            let admin = try #require(s.tokens["admin-a"])
            let added = try await s.server.send(.POST, "/v1/staff/accounts", json: ["login": "new-desk", "name": "Kim", "surname": "Park",
                                                                                   "role": "receptionist", "password": Self.staffPassword],
                                                token: admin)
            #expect(added.status == 201, "\(added.text)")
            let disabled = try await s.server.send(.POST, "/v1/staff/accounts/\(s.accountIds["doctor-a2"] ?? 0)/disable", token: admin)
            #expect(disabled.object["isActive"] as? Bool == false, "\(disabled.text)")
            let gone = try await s.server.send(.GET, "/v1/staff/me", token: s.tokens["doctor-a2"])
            #expect(gone.status == 401)
            // The receptionist books for the patient: 201, in the patient's list.
            let (method, path, body) = routes[10]
            let forPatient = try await s.server.send(method, path, json: body, token: desk)
            #expect(forPatient.status == 201, "\(forPatient.text)")
            let mine = try await s.server.send(.GET, "/v1/appointments", token: s.patient)
            // Its id among the patient's upcoming visits (the first one, moved to a minute ago when
            // the clinic's midnight is five minutes off, is under way and no longer upcoming).
            let upcoming = (mine.object["items"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
            #expect(upcoming.contains(try #require(forPatient.object["id"] as? Int)), "\(mine.text)")
            // The clinic admin gives the doctor of the receptionist's booking a day off that day:
            // refused with its id (409 hours_conflict); forced, it is cancelled with the reason.
            let second = try #require(forPatient.object["id"] as? Int), secondDoctor = try #require(forPatient.object["doctorId"] as? Int)
            let clinicId = try #require(forPatient.object["clinicId"] as? Int)
            let dayOff: [String: Any] = ["date": try await s.server.localDay(of: slot, clinicId: clinicId), "off": true]
            let conflict = try await s.server.send(.POST, "/v1/staff/doctors/\(secondDoctor)/exceptions", json: dayOff, token: admin)
            #expect(conflict.status == 409, "\(conflict.text)")
            #expect((conflict.object["error"] as? [String: Any])?["code"] as? String == "hours_conflict")
            var forced = dayOff
            forced["force"] = true
            forced["reason"] = "Dr. Thompson is ill"
            let added2 = try await s.server.send(.POST, "/v1/staff/doctors/\(secondDoctor)/exceptions", json: forced, token: admin)
            #expect(added2.status == 201, "\(added2.text)")
            #expect((added2.object["cancelled"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [second])
            let exceptionId = try #require((added2.object["exception"] as? [String: Any])?["id"] as? Int)
            let removed = try await s.server.send(.DELETE, "/v1/staff/exceptions/\(exceptionId)", token: admin)
            #expect(removed.status == 200, "\(removed.text)")
            // A visit type, offered to patients and booked by one for its whole length.
            let (typeMethod, typePath, typeBody) = routes[19]
            let type = try await s.server.send(typeMethod, typePath, json: typeBody, token: admin)
            #expect(type.status == 201, "\(type.text)")
            let typeId = try #require(type.object["id"] as? Int)
            let offered = try await s.server.send(.GET, "/v1/departments/\(s.department)/visit-types", headers: ["Accept-Language": "ru"])
            #expect(offered.array.map { $0["name"] as? String } == ["Повторный"])
            let longSlots = try await s.server.send(.GET, "/v1/departments/\(s.department)/slots?days=14&visitTypeId=\(typeId)")
            let longFree = try #require(longSlots.array.last { $0["isAvailable"] as? Bool == true })
            let longBooked = try await s.server.send(.POST, "/v1/appointments", json: ["departmentId": s.department, "start": longFree["start"] ?? "",
                                                                                       "visitTypeId": typeId], token: s.patient)
            #expect(longBooked.status == 201, "\(longBooked.text)")
            #expect(longBooked.object["end"] as? String == longFree["end"] as? String)
            #expect(longBooked.object["visitTypeId"] as? Int == typeId)
            // The other doctor, who has nothing booked, is deactivated and no longer listed.
            let (deMethod, dePath, deBody) = routes[22]
            let deactivated = try await s.server.send(deMethod, dePath, json: deBody, token: admin)
            #expect(deactivated.status == 200, "\(deactivated.text)")
            let listed = try await s.server.send(.GET, "/v1/departments/\(s.department)/doctors")
            #expect(!(listed.array.contains { $0["id"] as? Int == s.otherDoctor }))
            // Log-out ends the session server-side.
            let out = try await s.server.send(.DELETE, "/v1/staff/sessions/current", token: desk)
            #expect(out.status == 204)
            let after = try await s.server.send(.GET, "/v1/staff/me", token: desk)
            #expect(after.status == 401)
            #expect(try s.server.cli(["admin", "check", "--json"]).status == 0, "the audit chain holds")
        }
    }

    @Test func wrongStaffPasswordsAndBadBodies() async throws {
        try await InProcessServer.run { server in
            let wrong = try await server.send(.POST, "/v1/staff/sessions", json: ["login": "nobody", "password": "not the password"])
            #expect(wrong.status == 401, "\(wrong.text)")
            #expect((wrong.object["error"] as? [String: Any])?["code"] as? String == "invalid_credentials")
            let bad = try await server.send(.POST, "/v1/staff/sessions", json: ["login": 5])
            #expect(bad.status == 400, "\(bad.text)")
            let unknownAction = try await server.send(.POST, "/v1/staff/appointments/1/teleport", token: "0" + String(repeating: "a", count: 63))
            #expect(unknownAction.status == 401, "no staff session comes before the action: \(unknownAction.text)")
        }
    }
}
