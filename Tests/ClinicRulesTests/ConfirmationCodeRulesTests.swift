import Foundation
import Testing
@testable import ClinicKit

// A code typed to confirm a number or an address, on plain facts (issue 56): `CodeCheck` and
// what confirming a number writes. The stores' gather and write are
// `ClinicKitTests/AwaitedAccountSecurityTests.swift`'s.

@Suite struct ConfirmationCodeRulesTests {
    static let now = Fixture.now
    static func hash(_ code: String) -> String { "hash:" + code }
    static func waiting(expires: Date = now.addingTimeInterval(60), wrong: Int = 0) -> WaitingCode {
        WaitingCode(hash: hash("123456"), expiresAt: expires, wrongAttempts: wrong)
    }

    static func check(_ given: String, _ waiting: WaitingCode?) -> CodeCheck {
        CodeCheck.of(given, against: waiting, attempts: 5, now: now, hash: hash)
    }

    @Test func aCodeIsRightOnlyWhileItWaitsIsWithinItsTimeAndItsGuesses() {
        #expect(Self.check("123456", Self.waiting()) == .right)
        #expect(Self.check(" 123456 ", Self.waiting()) == .right, "spaces around it are not the code")
        #expect(Self.check("123457", Self.waiting()) == .wrong)
        #expect(Self.check("12345", Self.waiting()) == .wrong)
        #expect(Self.check("1234567", Self.waiting()) == .wrong)
        #expect(Self.check("", Self.waiting()) == .wrong)
        // Its time: the second it runs out it is wrong.
        #expect(Self.check("123456", Self.waiting(expires: Self.now.addingTimeInterval(1))) == .right)
        #expect(Self.check("123456", Self.waiting(expires: Self.now)) == .wrong)
        // Its guesses: after the fifth wrong one even the right code is wrong.
        #expect(Self.check("123456", Self.waiting(wrong: 4)) == .right)
        #expect(Self.check("123456", Self.waiting(wrong: 5)) == .wrong)
        #expect(Self.check("123456", nil) == .nothingWaits)
    }

    static func phone(confirmed: Bool = false, code: String? = "123456", expires: Date = now.addingTimeInterval(60),
                      attempts: Int = 0) -> StoredPhone {
        StoredPhone(clientId: 1, numberSealed: Data([1, 2]), numberKey: "key", confirmed: confirmed,
                    codeHash: code.map { ClientController.phoneCodeHash($0, clientId: 1) }, codeExpiresAt: code == nil ? nil : expires,
                    codeAttempts: attempts, codeSentAt: now, textReminders: true, textOffers: false, stopped: false)
    }

    static func confirming(_ phone: StoredPhone?, _ code: String) -> PhoneCodeDecision {
        ClientController.confirmingPhone(phone, code: code, clientId: 1, now: now)
    }

    @Test func theRightCodeConfirmsTheNumberAndClearsItsCode() {
        var confirmed = Self.phone()
        confirmed.confirmed = true
        confirmed.codeHash = nil
        confirmed.codeExpiresAt = nil
        #expect(Self.confirming(Self.phone(), "123456") == .confirm(confirmed, now: Self.now))
        var guessed = Self.phone(attempts: 3)
        guessed.confirmed = true
        guessed.codeHash = nil
        guessed.codeExpiresAt = nil
        guessed.codeAttempts = 0
        #expect(Self.confirming(Self.phone(attempts: 3), "123456") == .confirm(guessed, now: Self.now), "the wrong guesses forgotten")
    }

    @Test func aWrongCodeIsCountedAndNothingWaitingWritesNothing() {
        #expect(Self.confirming(Self.phone(), "654321") == .countWrong)
        #expect(Self.confirming(Self.phone(attempts: 5), "123456") == .countWrong)
        #expect(Self.confirming(Self.phone(expires: Self.now), "123456") == .countWrong)
        // The code is bound to its patient: another's hash is not this one's.
        #expect(ClientController.confirmingPhone(Self.phone(), code: "123456", clientId: 2, now: Self.now) == .countWrong)
        #expect(Self.confirming(nil, "123456") == PhoneCodeDecision.none)
        #expect(Self.confirming(Self.phone(confirmed: true), "123456") == PhoneCodeDecision.none, "confirmed already")
        #expect(Self.confirming(Self.phone(code: nil), "123456") == PhoneCodeDecision.none)
    }

    @Test func theAnswerIsTheStatusOrTheRefusal() throws {
        let confirmed = Self.confirming(Self.phone(), "123456")
        let status = try ClientController.confirmedPhone(confirmed) { "+12025550143" }
        #expect(status == PhoneStatus(number: "+12025550143", confirmed: true, textReminders: true, textOffers: false, stopped: false))
        #expect(throws: ClinicError.invalid(.phoneCodeWrong)) { try ClientController.confirmedPhone(.countWrong) { "" } }
        #expect(throws: ClinicError(.notFound, .phoneNoPending)) { try ClientController.confirmedPhone(.none) { "" } }
    }

    // MARK: The e-mail address

    static func anna(email: String? = "anna@example.org", pending: String? = "anna@example.net") -> Client {
        Client(id: 1, login: "anna", loginKey: "anna", passwordHash: "x", name: "Anna", surname: "Smith", street: "", house: "",
               city: "", lat: nil, lon: nil, homeClinicId: nil, preferredLanguage: "en", privacyAcceptedAt: nil, privacyVersion: nil,
               createdAt: now, email: email, pendingEmail: pending)
    }

    static func facts(_ client: Client = anna(), code: String? = "123456", wrong: Int = 0) -> ClientChangeFacts {
        ClientChangeFacts(client: client, emailConfirmation: code.map {
            EmailConfirmation(codeHash: ClientController.codeHash($0, clientId: 1), expiresAt: now.addingTimeInterval(60), wrongAttempts: wrong)
        })
    }

    @Test func theRightEmailCodeConfirmsTheWaitingAddressAndEndsTheCode() throws {
        let change = try ClientController.confirmingEmail(Self.facts(), code: "123456", now: Self.now)
        #expect(change.writes == [.rewrite(Self.anna(email: "anna@example.net", pending: nil)), .deleteEmailConfirmation])
        #expect(change.result == .confirmed(EmailStatus(confirmed: "anna@example.net", pending: nil)))
    }

    @Test func aWrongEmailCodeIsCountedAndNothingWaitingWritesNothing() throws {
        for (facts, code) in [(Self.facts(), "654321"), (Self.facts(wrong: 5), "123456")] {
            let change = try ClientController.confirmingEmail(facts, code: code, now: Self.now)
            #expect(change.writes == [.countWrongEmailCode] && change.result == .wrong)
        }
        let expired = try ClientController.confirmingEmail(Self.facts(), code: "123456", now: Self.now.addingTimeInterval(60))
        #expect(expired.result == .wrong)
        for facts in [Self.facts(code: nil), Self.facts(Self.anna(pending: nil))] {
            let change = try ClientController.confirmingEmail(facts, code: "123456", now: Self.now)
            #expect(change.writes.isEmpty && change.result == .nothingWaits)
        }
        #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { try ClientController.confirmingEmail(nil, code: "123456", now: Self.now) }
        #expect(throws: ClinicError.invalid(.emailCodeWrong)) { try ClientController.confirmedEmail(.wrong) }
        #expect(throws: ClinicError(.notFound, .emailNoPending)) { try ClientController.confirmedEmail(.nothingWaits) }
    }

    @Test func removingTheAddressForgetsBothEndsTheCodeAndDropsUnsentMail() throws {
        let change = try ClientController.removingEmail(Self.facts())
        #expect(change.writes == [.rewrite(Self.anna(email: nil, pending: nil)), .deleteEmailConfirmation, .dropPendingDeliveries([.email])])
        #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { try ClientController.removingEmail(nil) }
    }

    // MARK: Setting a number

    static func numberFacts(_ client: Client = anna(), phone: StoredPhone? = nil, seen: Int64? = now.seconds - 60) -> ClientChangeFacts {
        ClientChangeFacts(client: client, emailConfirmation: nil, phone: phone, numberKey: "key", textGatewaySeen: seen)
    }

    static func setting(_ facts: ClientChangeFacts?, from address: String? = nil) throws -> ClientChange<PhoneStatus> {
        try ClientController.settingPhone(facts, number: "+12025550143", code: "042042", from: address, limits: CodeLimits(), now: now)
    }

    /// A new number: the minute's count and `CodeLimits`' (the address's only with one), the
    /// phone saved unconfirmed with the code's hash and the texts chosen before, the texts for the
    /// number that was dropped, and the code texted in the patient's language.
    @Test func aNewNumberIsCountedSavedAndTextedItsCodeInThePatientsLanguage() throws {
        var ru = Self.anna(), had = Self.phone(confirmed: true)
        ru.preferredLanguage = "ru"
        had.numberKey = "the number that was"
        let change = try Self.setting(Self.numberFacts(ru, phone: had), from: "192.0.2.7")
        #expect(change.result == PhoneStatus(number: "+12025550143", confirmed: false, textReminders: true, textOffers: false, stopped: false))
        let counts = change.writes.compactMap { write -> String? in if case .countSend(let count, _) = write { count.key } else { nil } }
        #expect(counts == ["code:text:minute:1", "code:text:all", "code:text:account:1", "code:text:to:key",
                           "code:text:from:" + CodeLimits.addressKey("192.0.2.7")])
        #expect(Array(change.writes.dropFirst(counts.count)) == [
            .savePhoneNumber("+12025550143", StoredPhone(
                clientId: 1, numberSealed: Data(), numberKey: "key", confirmed: false, codeHash: ClientController.phoneCodeHash("042042", clientId: 1),
                codeExpiresAt: Self.now.addingTimeInterval(1800), codeAttempts: 0, codeSentAt: Self.now, textReminders: true, textOffers: false,
                stopped: false), at: Self.now),
            .dropPendingDeliveries([.text]),
            .enqueueCodeText(Strings.text(.textCode, .ru, ["042042"]), at: Self.now),
        ])
        #expect(Strings.text(.textCode, .ru, ["042042"]) != Strings.text(.textCode, .en, ["042042"]))
        let fromTheCommandLine = try Self.setting(Self.numberFacts())
        #expect(fromTheCommandLine.writes.filter { if case .countSend = $0 { true } else { false } }.count == 4, "no client address")
    }

    /// The number already confirmed writes nothing; without a gateway seen within the hour no
    /// code is promised; a patient gone is not signed in.
    @Test func theConfirmedNumberWritesNothingAndNoGatewayPromisesNoCode() throws {
        let same = try Self.setting(Self.numberFacts(phone: Self.phone(confirmed: true)))
        // The phone fixture's key is "key", the number's key in the facts too.
        #expect(same.writes.isEmpty && same.result.confirmed)
        for seen in [nil, Self.now.seconds - 3600] {
            #expect(throws: ClinicError(.textsUnavailable, .textsUnavailable)) { try Self.setting(Self.numberFacts(seen: seen)) }
        }
        #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { try Self.setting(nil) }
    }
}
