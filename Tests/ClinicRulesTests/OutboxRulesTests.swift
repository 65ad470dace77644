import Foundation
import Testing
@testable import ClinicKit

// The outbox's rules on plain facts (issue 56): which reminders are due, and what a claimed
// delivery becomes (an e-mail, a text, or nothing: dropped). Facts built by hand, the decision
// called; no store, no file, no server. The stores' gather and write are
// `ClinicKitTests/MessagingTests.swift`'s and `TextTests.swift`'s, on both stores.

@Suite struct OutboxRulesTests {
    static let now = Fixture.now
    static let hour: TimeInterval = 3600

    static func visit(_ start: Date, chosen: Date? = Fixture.now.addingTimeInterval(-7 * 86_400), status: AppointmentStatus = .scheduled,
                      client: Int64? = 7, id: Int64 = 900) -> RemindableVisit {
        RemindableVisit(appointment: Fixture.appointment(id: id, start: start, status: status, client: client), chosenAt: chosen)
    }

    static func due(_ visits: [RemindableVisit], written: Set<String> = [], leads: Set<Int> = [24, 2], at now: Date = now) -> [DueReminder] {
        Outbox.dueReminders(visits, written: written, leads: leads, now: now)
    }

    // MARK: Reminders

    @Test func aVisitIsRemindedAtTheShortestLeadWhoseTimeHasCome() {
        let start = Self.now.addingTimeInterval(20 * Self.hour)
        #expect(Self.due([Self.visit(start)]).map(\.lead) == [24], "inside 24 h, outside 2 h")
        #expect(Self.due([Self.visit(start)]).first?.key == "reminder:900:\(start.seconds):24")
        // After an outage both leads have come: one reminder, the shorter lead's, not two.
        let soon = Self.now.addingTimeInterval(1 * Self.hour)
        #expect(Self.due([Self.visit(soon)]).map(\.lead) == [2])
        // Neither lead has come yet; a lead of 0 is no lead.
        #expect(Self.due([Self.visit(Self.now.addingTimeInterval(30 * Self.hour))]).isEmpty)
        #expect(Self.due([Self.visit(start)], leads: []).isEmpty)
    }

    @Test func aReminderIsWrittenOnceAndNotForATimeChosenInsideItsLead() {
        let start = Self.now.addingTimeInterval(20 * Self.hour)
        let key = "reminder:900:\(start.seconds):24"
        #expect(Self.due([Self.visit(start)], written: [key]).isEmpty, "written already")
        #expect(Self.due([Self.visit(start)], written: ["reminder:900:\(start.seconds + 3600):24"]).count == 1,
                "a key of the visit's old start is another reminder (a moved visit is reminded of its new start)")
        // Booked (or moved) 10 hours before: inside the 24-hour lead, its booking message says it all.
        #expect(Self.due([Self.visit(start, chosen: start.addingTimeInterval(-10 * Self.hour))]).isEmpty)
        // No time of choice known: the visit's creation stands for it (now, inside the lead).
        #expect(Self.due([Self.visit(start, chosen: nil)]).isEmpty)
    }

    @Test func aCancelledOrPastOrPatientlessVisitIsNotReminded() {
        let start = Self.now.addingTimeInterval(20 * Self.hour)
        #expect(Self.due([Self.visit(start, status: .cancelled)]).isEmpty)
        #expect(Self.due([Self.visit(start, client: nil)]).isEmpty)
        #expect(Self.due([Self.visit(Self.now.addingTimeInterval(-60))]).isEmpty, "begun already")
        #expect(Self.due([Self.visit(start, id: 1), Self.visit(start, status: .noShow, id: 2), Self.visit(start, id: 3)]).map(\.appointment.id)
                == [1, 3])
    }

    @Test func aDueReminderIsWrittenInThePatientsLanguageWithItsText() throws {
        let start = Self.now.addingTimeInterval(20 * Self.hour)
        let due = try #require(Self.due([Self.visit(start)]).first)
        let write = try #require(Outbox.reminder(due, context: Fixture.context))
        #expect(write.dedupeKey == due.key && write.message.kind == .reminder && write.message.clientId == 7)
        #expect(write.message.body.contains("Harbor Clinic") && write.message.emailed)
        #expect(write.text?.topic == .reminder && write.text?.body.contains("Harbor Clinic") == true)
        var russian = Fixture.context
        russian = AppointmentMessageContext(language: .ru, emailConfirmed: false, clinicName: russian.clinicName, address: russian.address,
                                            city: russian.city, state: russian.state, zip: russian.zip, timeZone: russian.timeZone,
                                            specialization: russian.specialization)
        let inRussian = try #require(Outbox.reminder(due, context: russian))
        #expect(inRussian.message.subject != write.message.subject && !inRussian.message.emailed)
    }

    // MARK: Composing a claimed delivery

    static func delivery(_ content: ClaimedDelivery.Content, id: Int64 = 41) -> ClaimedDelivery {
        ClaimedDelivery(id: id, clientId: 7, content: content, createdAt: now, attempt: 1)
    }

    static func anna(email: String? = "anna@example.org", pending: String? = nil, online: Bool = true) -> Client {
        Client(id: 7, login: "anna", loginKey: "anna", passwordHash: online ? "x" : "", name: "Anna", surname: "Smith", street: "",
               house: "", city: "", lat: nil, lon: nil, homeClinicId: 10, preferredLanguage: "en", privacyAcceptedAt: nil,
               privacyVersion: nil, createdAt: now, email: email, pendingEmail: pending)
    }

    static func phone(confirmed: Bool = true, stopped: Bool = false) -> StoredPhone {
        StoredPhone(clientId: 7, numberSealed: Data(), numberKey: "k", confirmed: confirmed, stopped: stopped)
    }

    static func compose(_ facts: DeliveryFacts, site: String = "https://clinic.example") -> OutgoingDelivery? {
        Outbox.compose(facts, from: "clinic@example.org", site: site, textCountries: .standard, now: now)
    }

    static func mail(_ outgoing: OutgoingDelivery?) -> (to: String, text: String)? {
        guard case .mail(let to, let data) = outgoing else { return nil }
        return (to, String(decoding: data, as: UTF8.self))
    }

    @Test func aTextGoesToAConfirmedNumberNotStoppedInTheListedCountriesWithTheSitesAddress() {
        func facts(_ content: ClaimedDelivery.Content, phone: StoredPhone? = Self.phone(), number: String? = "+12025550143",
                   payload: String? = "Offer: {site}/o/abc") -> DeliveryFacts {
            DeliveryFacts(delivery: Self.delivery(content), payload: payload, phone: phone, number: phone == nil ? nil : number)
        }
        #expect(Self.compose(facts(.text(sealed: Data()))) == .text(to: "+12025550143", TextMessage("Offer: https://clinic.example/o/abc")))
        #expect(Self.compose(facts(.text(sealed: Data()), phone: Self.phone(confirmed: false))) == nil, "no longer confirmed")
        #expect(Self.compose(facts(.text(sealed: Data()), phone: Self.phone(stopped: true))) == nil, "after STOP")
        #expect(Self.compose(facts(.text(sealed: Data()), phone: nil)) == nil, "the number removed")
        #expect(Self.compose(facts(.text(sealed: nil), payload: nil)) == nil, "the body forgotten")
        #expect(Self.compose(facts(.text(sealed: Data()), number: "+19005550143")) == nil, "a premium range")
        #expect(Self.compose(facts(.text(sealed: Data()), number: "+442071838750")) == nil, "outside the deployment's countries")
        // A code goes to the number being confirmed, and to no number confirmed meanwhile.
        #expect(Self.compose(facts(.textCode(sealed: Data()), phone: Self.phone(confirmed: false), payload: "Code 123456"))
                == .text(to: "+12025550143", TextMessage("Code 123456")))
        #expect(Self.compose(facts(.textCode(sealed: Data()), payload: "Code 123456")) == nil)
    }

    @Test func aCodeIsMailedToThePendingAddressAndAClaimCodeOnlyToAWalkInWithoutAnAccount() throws {
        let code = DeliveryFacts(delivery: Self.delivery(.emailCode(sealed: Data())), client: Self.anna(pending: "anna@example.net"),
                                 payload: "123456", mailInstance: "abc")
        let mailed = try #require(Self.mail(Self.compose(code)))
        #expect(mailed.to == "anna@example.net" && mailed.text.contains("delivery-41.abc@clinic"))
        var noPending = code
        noPending.client = Self.anna()
        #expect(Self.compose(noPending) == nil, "the address was confirmed or removed meanwhile")
        var gone = code
        gone.client = nil
        #expect(Self.compose(gone) == nil, "the patient is gone")
        var claim = DeliveryFacts(delivery: Self.delivery(.emailCode(sealed: Data())), client: Self.anna(online: false),
                                  payload: Outbox.claimCodeMark + "ABCD2345", homeClinicName: "Harbor Clinic")
        let claimMail = try #require(Self.mail(Self.compose(claim)))
        #expect(claimMail.to == "anna@example.org")
        claim.client = Self.anna(online: true)
        #expect(Self.compose(claim) == nil, "an account was made meanwhile: the code has no use")
    }

    @Test func aMessageIsMailedWithItsEventAndAReminderSaysWhereToCancel() throws {
        let visit = Fixture.appointment(id: 900, start: Fixture.tuesday10)
        func message(_ kind: MessageKind) -> InboxMessage {
            InboxMessage(id: 5, kind: kind, appointmentId: 900, clinicId: 10, subject: "Your visit", body: "Details",
                         createdAt: Self.now, readAt: nil)
        }
        let event = CalendarEvent(appointment: visit, clinic: Fixture.clinic, specialization: "therapy", sequence: 0)
        let booked = DeliveryFacts(delivery: Self.delivery(.message(5)), client: Self.anna(), message: message(.booked), event: event)
        let bookedMail = try #require(Self.mail(Self.compose(booked)))
        #expect(bookedMail.to == "anna@example.org" && bookedMail.text.contains("appointment-900.ics"))
        #expect(!bookedMail.text.contains("/appointments/900"))
        let reminder = DeliveryFacts(delivery: Self.delivery(.message(5)), client: Self.anna(), message: message(.reminder))
        let reminderMail = try #require(Self.mail(Self.compose(reminder)))
        #expect(!reminderMail.text.contains("appointment-900.ics"), "a reminder carries no event")
        // Without the site's address there is no link to give: the body is the message's alone.
        let noSite = try #require(Self.mail(Self.compose(reminder, site: "")))
        #expect(noSite.text != reminderMail.text && noSite.text.count < reminderMail.text.count)
        var booking = reminder
        booking.message = message(.booked)
        #expect(try #require(Self.mail(Self.compose(booking))).text.count == noSite.text.count, "only a reminder says where to cancel")
        var noAddress = booked
        noAddress.client = Self.anna(email: nil)
        #expect(Self.compose(noAddress) == nil, "the address removed")
        var noMessage = booked
        noMessage.message = nil
        #expect(Self.compose(noMessage) == nil, "the message gone")
    }
}
