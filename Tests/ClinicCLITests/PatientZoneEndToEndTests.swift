import Foundation
import Testing

/// Issue 42, items 18 and 19 on the command line: the inbox and the access log show times in
/// the patient's own zone (their address's), named, whatever the terminal's zone; the access
/// log says what staff did in words, in the patient's language, not as the audit trail's codes.
@Suite struct PatientZoneEndToEndTests {
    let staffPassword = "kettle-harbor-lantern"

    @Test func theInboxAndTheAccessLogAreInThePatientsZoneAndWords() throws {
        let cli = try CLIHarness()
        // Reno: America/Los_Angeles; the terminal says UTC. A patient of Renown Regional, booked.
        let utc = ["TZ": "UTC"]
        let (_, clinicId) = try MessagesEndToEndTests().bookedPatient(cli)

        let pacific = #/(AM|PM) P[SD]T/#
        let inbox = try cli.run(["messages"], environment: utc)
        #expect(inbox.status == 0 && inbox.stdout.contains(pacific), "\(inbox.stdout)")

        // A receptionist of the clinic finds the patient: the access log says so in words.
        let staffEnvironment = ["CLINIC_STAFF_SESSION": cli.sessionPath + "-desk"]
        #expect(try cli.run(["admin", "staff", "add", "--login", "desk", "--name", "Sam", "--surname", "Lee", "--role", "receptionist",
                             "--clinic", String(clinicId), "--password-stdin"], input: staffPassword + "\n").status == 0)
        #expect(try cli.run(["staff", "login", "--login", "desk", "--password-stdin"], input: staffPassword + "\n",
                            environment: staffEnvironment).status == 0)
        #expect(try cli.run(["staff", "patients", "smith"], environment: staffEnvironment).stdout.contains("Smith"))
        let log = try cli.run(["profile", "access-log"], environment: utc)
        #expect(log.status == 0 && log.stdout.contains("Found you in a search of patients"), "\(log.stdout)")
        #expect(!log.stdout.contains("patient.search") && log.stdout.contains(pacific), "\(log.stdout)")
        // The codes stay in the JSON, for programs.
        let entries = try #require(try cli.run(["profile", "access-log", "--json"]).json() as? [[String: Any]])
        #expect(entries.contains { $0["action"] as? String == "patient.search" })

        #expect(try cli.run(["profile", "edit", "--lang", "ru"]).status == 0)
        let russian = try cli.run(["profile", "access-log"], environment: utc)
        #expect(russian.stdout.contains("Нашёл(ла) вас в поиске пациентов") && russian.stdout.contains(#/\d\d:\d\d \S/#),
                "\(russian.stdout)")
    }
}
