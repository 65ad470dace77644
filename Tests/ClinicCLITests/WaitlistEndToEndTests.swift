import Foundation
import Testing

/// `clinic waitlist …` (issue 45) on either store: a patient waits with hours and weekdays,
/// another cancels, the operator's `admin deliver` (what `clinic serve` does in the background)
/// offers the time, and the first books it with `waitlist accept`. Refusals exit with their codes.
@Suite struct WaitlistEndToEndTests {
    @Test func aPatientWaitsIsOfferedTheCancelledTimeAndAcceptsIt() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let scheduling = SchedulingEndToEndTests()
        let anna = try scheduling.patient(cli, "anna"), bob = try scheduling.patient(cli, "bob")
        let surgery = try scheduling.departmentId(cli, city: "Reno", "surgery") // one doctor
        let monday = nextMonday()
        let booked = try cli.run(["book", "--department", String(surgery), "--at", "\(monday) 09:00", "--json"], session: anna)
        #expect(booked.status == 0, "\(booked.stderr)")
        let appointment = try #require((booked.json() as? [String: Any])?["id"] as? Int)

        let joined = try cli.run(["waitlist", "join", "--department", String(surgery), "--hours", "08:00-12:00", "--weekdays", "1",
                                  "--json"], session: bob)
        #expect(joined.status == 0, "\(joined.stderr)")
        let entry = try #require(joined.json() as? [String: Any])
        #expect(entry["status"] as? String == "waiting" && entry["weekdays"] as? [Int] == [1] && entry["hoursFrom"] as? String == "08:00")
        let listed = try cli.run(["waitlist"], session: bob)
        #expect(listed.status == 0 && listed.stdout.contains("waiting") && listed.stdout.contains("08:00–12:00"), "\(listed.stdout)")

        // Refused, with their codes: twice at one department, hours across midnight, weekday 0.
        let before = try cli.fingerprint(excluding: ["sessions"])
        let twice = try cli.run(["waitlist", "join", "--department", String(surgery), "--json"], session: bob)
        #expect(twice.status == 5 && twice.errorCode == "already_waiting", "\(twice.stderr)")
        let night = try cli.run(["waitlist", "join", "--department", String(surgery), "--hours", "22:00-02:00", "--json"], session: anna)
        #expect(night.status == 2 && night.errorCode == "invalid_input", "\(night.stderr)")
        let sunday = try cli.run(["waitlist", "join", "--department", String(surgery), "--weekdays", "0", "--json"], session: anna)
        #expect(sunday.status == 2 && sunday.errorCode == "invalid_input", "\(sunday.stderr)")
        #expect(try cli.fingerprint(excluding: ["sessions"]) == before, "refusals change nothing")

        #expect(try cli.run(["cancel", String(appointment)], session: anna).status == 0)
        let delivered = try cli.run(["admin", "deliver", "--json"])
        #expect(delivered.status == 0 && (delivered.json() as? [String: Any])?["waitlist"] as? Int == 1, "\(delivered.stdout)")
        let offers = try #require((try cli.run(["waitlist", "offers", "--json"], session: bob).json() as? [String: Any])?["items"]
                                  as? [[String: Any]])
        #expect(offers.count == 1)
        let offer = try #require(offers.first?["id"] as? Int)
        #expect(try cli.run(["waitlist", "accept", String(offer), "--json"], session: anna).errorCode == "not_found")
        let accepted = try cli.run(["waitlist", "accept", String(offer), "--json"], session: bob)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect((accepted.json() as? [String: Any])?["status"] as? String == "scheduled")
        #expect(try cli.run(["waitlist"], session: bob).stdout.contains("waitlist join"), "done: no entry left")
    }

    /// The front desk's waitlist (`staff waitlist add`, `priority`, `list`, `remove`) and a
    /// patient's `decline`, `resume` and `leave`, on either store.
    @Test func theFrontDeskKeepsTheWaitlistAndAPatientDeclinesAndLeaves() throws {
        let cli = try CLIHarness()
        let scheduling = SchedulingEndToEndTests()
        let scene = try scheduling.staffScene(cli, login: "desk", role: "receptionist")
        let (desk, cardiology) = (scene.session, String(scene.cardiology))
        #expect(try cli.run(["staff", "login", "--login", "desk", "--password-stdin"], input: SchedulingEndToEndTests.staffPassword,
                             session: desk).status == 0)
        let added = try cli.run(["staff", "waitlist", "add", "--patient", "pat", "--department", cardiology, "--note", "mornings only",
                                 "--json"], session: desk)
        let entry = try #require((added.json() as? [String: Any])?["id"] as? Int, "\(added.stderr)")
        let raised = try cli.run(["staff", "waitlist", "priority", String(entry), "5", "--json"], session: desk)
        #expect((raised.json() as? [String: Any])?["priority"] as? Int == 5, "\(raised.stderr)")
        let listed = try cli.run(["staff", "waitlist"], session: desk)
        #expect(listed.stdout.contains("Pat Smith") && listed.stdout.contains("mornings only"), "\(listed.stdout)")
        #expect(try cli.run(["staff", "waitlist", "remove", String(entry)], session: desk).status == 0)
        let none = try cli.run(["staff", "waitlist", "list", "--json"], session: desk)
        #expect((none.json() as? [String: Any])?["items"] as? [Any] != nil && ((none.json() as? [String: Any])?["items"] as? [Any])?.isEmpty == true,
                "\(none.stdout)")

        // Bob waits; pat's time frees up and is offered to him; he declines it and keeps waiting, then leaves.
        let bob = try scheduling.patient(cli, "bob")
        let joined = try cli.run(["waitlist", "join", "--department", cardiology, "--json"], session: bob)
        let bobsEntry = try #require((joined.json() as? [String: Any])?["id"] as? Int, "\(joined.stderr)")
        #expect(try cli.run(["cancel", String(try #require(scene.booked["id"] as? Int))], session: desk).status == 0)
        #expect((try cli.run(["admin", "deliver", "--json"]).json() as? [String: Any])?["waitlist"] as? Int == 1)
        let offers = try #require((try cli.run(["waitlist", "offers", "--json"], session: bob).json() as? [String: Any])?["items"]
                                  as? [[String: Any]])
        let offer = try #require(offers.first?["id"] as? Int)
        let clinics = try #require(try cli.run(["clinics", "list", "--city", "Los Angeles", "--json"]).json() as? [[String: Any]])
        let name = try #require(clinics.first { $0["id"] as? Int == scene.clinic }?["name"] as? String)
        let shown = try cli.run(["waitlist", "offers"], session: bob)
        #expect(shown.stdout.contains(String(offer)) && shown.stdout.contains(String(name.prefix(12))), "the offer's clinic named: \(shown.stdout)")
        #expect(try cli.run(["waitlist", "decline", String(offer), "--json"], session: desk).errorCode == "not_found", "not pat's")
        #expect(try cli.run(["waitlist", "decline", String(offer)], session: bob).status == 0)
        let still = try cli.run(["waitlist", "--json"], session: bob)
        #expect(((still.json() as? [String: Any])?["items"] as? [[String: Any]])?.first?["status"] as? String == "waiting", "\(still.stdout)")
        #expect(try cli.run(["waitlist", "resume", String(bobsEntry), "--json"], session: desk).errorCode == "not_found", "not pat's")
        let resumed = try cli.run(["waitlist", "resume", String(bobsEntry), "--json"], session: bob)
        #expect((resumed.json() as? [String: Any])?["status"] as? String == "waiting", "\(resumed.stderr)")
        #expect(try cli.run(["waitlist", "leave", String(bobsEntry)], session: bob).status == 0)
        #expect(try cli.run(["waitlist"], session: bob).stdout.contains("waitlist join"), "no entry left")
    }
}
