@testable import ClinicKit
import Foundation
import Testing
@testable import clinic

/// The command line's own words (`TerminalKey`), checked as ClinicKit's are (LocalizationTests).
@Suite struct TerminalWordsTests {
    /// Every text the command line says exists in both languages, with the same placeholders.
    @Test func everyKeyHasEnglishAndRussian() {
        let placeholder = /\{[0-9][fs]?\}/
        for key in TerminalKey.allCases {
            let english = TerminalWords.en[key], russian = TerminalWords.ru[key]
            #expect(english != nil && english?.isEmpty == false, "\(key) has no English")
            #expect(russian != nil && russian?.isEmpty == false, "\(key) has no Russian")
            guard let english, let russian else { continue }
            let inEnglish = Set(english.matches(of: placeholder).map { String(english[$0.range]) })
            let inRussian = Set(russian.matches(of: placeholder).map { String(russian[$0.range]) })
            #expect(inEnglish == inRussian, "\(key): \(inEnglish) vs \(inRussian)")
        }
        #expect(TerminalWords.en.count == TerminalKey.allCases.count && TerminalWords.ru.count == TerminalKey.allCases.count,
                "no stray entries")
    }

    /// The tables are one an area: a key in two of them would be said by whichever comes first.
    @Test func everyKeyIsInOneTable() {
        #expect(TerminalWords.areas.map(\.count).reduce(0, +) == TerminalKey.allCases.count, "a key in two tables")
    }

    /// A word is either the command line's or ClinicKit's: a name in both enums would make the
    /// call sites' `.name` ambiguous, and one of the two texts dead.
    @Test func noKeyIsAlsoClinicKits() {
        let clinicKit = Set(MessageKey.allCases.map(\.rawValue))
        for key in TerminalKey.allCases { #expect(!clinicKit.contains(key.rawValue), "\(key) is in both") }
    }

    /// The same renderer as ClinicKit's: terms, specializations and arguments that are data.
    @Test func wordsAreRenderedAsClinicKitsAre() {
        #expect(TerminalWords.text(.statusSet, .ru, ["7", "no_show"]) == "Запись 7 теперь «неявка».")
        #expect(TerminalWords.text(.loggedIn, .en, ["anna"]) == "Logged in as anna.")
        #expect(!TerminalWords.text(.loggedIn, .en, ["a\u{1B}[31mb"]).contains("\u{1B}"), "an argument is shown, never obeyed")
        #expect(TerminalWords.text(.initDone, .en, ["{1}", "x"]).contains("{1}"), "an argument is not a template")
        #expect(Strings.text(.loggedIn, .ru, ["anna"]) == TerminalWords.text(.loggedIn, .ru, ["anna"]))
    }

    /// The command line's own errors carry ClinicKit's codes, and so its exit statuses.
    @Test func ownErrorsUseTheSharedCodes() {
        let error = TerminalError.invalid(.missingOption, "--login")
        #expect(error.code == .invalidInput && error.code.exitStatus == 2)
        #expect(error.message(in: .en) == TerminalWords.text(.missingOption, .en, ["--login"]))
        #expect(TerminalError(.storage, .serveFailed, "h:1", "r").code.exitStatus == 6)
    }

    /// The exit statuses docs/CLI.md documents.
    @Test func exitStatusesAreStable() {
        let expected: [ClinicError.Code: Int32] = [
            .invalidInput: 2, .weakPassword: 2, .privacyNotAccepted: 2, .storeURLInvalid: 2, .storeUnsupported: 2, .fileTooLarge: 2,
            .unsupportedType: 2,
            .notLoggedIn: 3, .invalidCredentials: 3, .forbidden: 3, .insecureSessionFile: 3, .accountLocked: 3, .rateLimited: 3,
            .notFound: 4, .geocodeFailed: 4,
            .loginTaken: 5, .slotTaken: 5, .slotUnavailable: 5, .overlappingAppointment: 5, .invalidTransition: 5, .tooLate: 5,
            .limitReached: 5, .patientUnavailable: 5, .idempotencyKeyReused: 5, .hoursConflict: 5, .storeNotEmpty: 5, .alreadyWaiting: 5,
            .textsUnavailable: 5, .tooClose: 5,
            .migrationMismatch: 6, .databaseTooNew: 6, .busy: 6, .storage: 6, .keyError: 6,
            .storeUnreachable: 6, .storeAuthFailed: 6, .storeDatabaseMissing: 6,
            .internalError: 70,
        ]
        for code in ClinicError.Code.allCases { #expect(code.exitStatus == expected[code], "\(code)") }
    }
}
