import Foundation
import Testing

/// Issue 42, items 18 and 19 on the command line: the inbox and the access log show times in
/// the patient's own zone (their address's), named, whatever the terminal's zone; the access
/// log says what staff did in words, in the patient's language, not as the audit trail's codes.
@Suite struct PatientZoneEndToEndTests {
    let password = "correct-horse-42", staffPassword = "kettle-harbor-lantern"

    @Test func theInboxAndTheAccessLogAreInThePatientsZoneAndWords() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        // Reno: America/Los_Angeles; the terminal says UTC.
        let utc = ["TZ": "UTC"]
        #expect(try cli.run(["register", "--login", "pat", "--name", "Pat", "--surname", "Smith", "--street", "Main Street",
                             "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], input: password + "\n").status == 0)
        #expect(try cli.run(["login", "--login", "pat", "--password-stdin"], input: password + "\n").status == 0)
        let clinics = try #require(try cli.run(["clinics", "list", "--json"]).json() as? [[String: Any]])
        let clinicId = try #require(clinics.first { $0["name"] as? String == "Renown Regional" }?["id"] as? Int)
        let department = try #require((try cli.run(["departments", String(clinicId), "--json"]).json() as? [[String: Any]])?.first?["id"] as? Int)
        let slots = try #require(try cli.run(["slots", "--department", String(department), "--from", nextMonday(), "--json"]).json() as? [[String: Any]])
        let start = try #require(slots.first { $0["isAvailable"] as? Bool == true }?["start"] as? String)
        #expect(try cli.run(["book", "--department", String(department), "--at", start]).status == 0)

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
