import ClinicKit
import Foundation
import HTTPTypes
import Testing

/// Every front in the server that books — the API, the web form, the staff API — is counted
/// in `clinic_appointment_changes_total` (ClinicKit counts each change where it happens, the
/// server only exports the count).
@Suite struct ChangeMetricsTests {
    static let staffPassword = "kettle-harbor-lantern"

    /// The sample of `clinic_appointment_changes_total{operation="book",outcome="ok"}`, 0 when absent.
    static func booked(_ server: InProcessServer) async throws -> Double {
        let metrics = try await server.send(.GET, "/metrics")
        let prefix = #"clinic_appointment_changes_total{operation="book",outcome="ok"} "#
        guard let line = metrics.text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Double(line.dropFirst(prefix.count)) ?? -1
    }

    @Test func aBookingThroughEachFrontIsCounted() async throws {
        try await InProcessServer.run { server in
            #expect(try await Self.booked(server) == 0)
            let token = try await server.patient("counted")
            let (department, clinicId) = try await server.department()

            // The API.
            let api = try await server.send(.POST, "/v1/appointments",
                                            json: ["departmentId": department, "start": try await server.freeSlot(department)], token: token)
            #expect(api.status == 201, "\(api.text)")
            #expect(try await Self.booked(server) == 1)

            // The web form.
            let loginPage = try await server.web(.GET, "/login", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await server.web(.POST, "/login", cookies: ["clinic_csrf": nonce],
                                                form: ["csrf": try #require(loginPage.csrf), "login": "counted",
                                                       "password": InProcessServer.password])
            #expect(signedIn.status == 303, "\(signedIn.text)")
            let session = try #require(signedIn.cookie("clinic_session"))
            let home = try await server.web(.GET, "/", cookies: ["clinic_csrf": nonce, "clinic_session": session])
            let web = try await server.web(.POST, "/appointments", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                           form: ["csrf": try #require(home.csrf), "department": String(department),
                                                  "start": try await server.freeSlot(department, skipping: 4)])
            #expect(web.status == 303, "\(web.text)")
            #expect(web.headers["Location"].first?.hasPrefix("/appointments/") == true)
            #expect(try await Self.booked(server) == 2)

            // The staff API: a receptionist books for the patient.
            _ = try server.system.staff.addStaff(StaffInput(login: "desk-m", name: "Sam", surname: "Lee", role: .receptionist,
                                                            clinicId: Int64(clinicId), doctorId: nil, password: Self.staffPassword))
            let staffSession = try await server.send(.POST, "/v1/staff/sessions", json: ["login": "desk-m", "password": Self.staffPassword])
            #expect(staffSession.status == 201, "\(staffSession.text)")
            let staffToken = try #require(staffSession.object["token"] as? String)
            let staff = try await server.send(.POST, "/v1/staff/appointments",
                                              json: ["patientLogin": "counted", "departmentId": department,
                                                     "start": try await server.freeSlot(department, skipping: 8)], token: staffToken)
            #expect(staff.status == 201, "\(staff.text)")
            #expect(try await Self.booked(server) == 3)
            #expect(try server.scalar("SELECT count(*) FROM appointments") == 3)
        }
    }
}
