import Foundation
import Testing
@testable import ClinicKit

@Suite(.storeFree) struct LocalizationTests {
    /// Every text a person can read exists in both languages, with the same placeholders.
    @Test func everyKeyHasEnglishAndRussian() {
        let placeholder = /\{[0-9][fs]?\}/
        for key in MessageKey.allCases {
            let english = Strings.en[key], russian = Strings.ru[key]
            #expect(english != nil && english?.isEmpty == false, "\(key) has no English")
            #expect(russian != nil && russian?.isEmpty == false, "\(key) has no Russian")
            guard let english, let russian else { continue }
            let inEnglish = Set(english.matches(of: placeholder).map { String(english[$0.range]) })
            let inRussian = Set(russian.matches(of: placeholder).map { String(russian[$0.range]) })
            #expect(inEnglish == inRussian, "\(key): \(inEnglish) vs \(inRussian)")
        }
        #expect(Strings.en.count == MessageKey.allCases.count && Strings.ru.count == MessageKey.allCases.count, "no stray entries")
    }

    /// The tables are one an area: a key in two of them would be said by whichever comes first.
    @Test func everyKeyIsInOneTable() {
        for tables in [Strings.tablesEN, Strings.tablesRU] {
            #expect(tables.map(\.count).reduce(0, +) == MessageKey.allCases.count, "a key in two tables")
        }
    }

    @Test func russianPluralsFollowTheLastDigits() {
        let expected = [1: "1 запись", 2: "2 записи", 4: "4 записи", 5: "5 записей", 11: "11 записей", 12: "12 записей",
                        14: "14 записей", 21: "21 запись", 22: "22 записи", 25: "25 записей", 101: "101 запись", 111: "111 записей", 0: "0 записей"]
        for (n, text) in expected { #expect(Noun.appointment.count(n, .ru) == text, "\(n)") }
        #expect(Noun.appointment.count(1, .en) == "1 appointment" && Noun.appointment.count(2, .en) == "2 appointments")
        #expect(Noun.patient.count(3, .ru) == "3 пациента" && Noun.clinic.count(5, .ru) == "5 клиник")
    }

    @Test func specializationsHaveRussianNames() {
        for specialization in Specialization.all {
            #expect(!specialization.russian.isEmpty && specialization.russian != specialization.english)
            #expect(Specialization.key(for: specialization.russian) == specialization.key)
        }
    }

    @Test func datesFollowTheLanguage() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Minsk"))
        let date = utc("2026-11-22T11:30:00Z")
        #expect(DateText.dateTime(date, timeZone: zone, language: .ru) == "22.11.2026, 14:30")
        #expect(DateText.dateTime(date, timeZone: zone, language: .en) == "Nov 22, 2026 at 2:30 PM")
    }
}

/// Issue 23: command-line wording stays on the command line. Messages the API and the web app
/// show (every key but the command line's own) name no option and no command.
@Suite(.storeFree) struct FrontNeutralMessageTests {
    /// Said only by the command line (or never shown by the server: a 500 has no detail). The
    /// command line's own words are not ClinicKit's keys at all (`TerminalKey`, in the clinic target).
    static let commandLineOnly: Set<MessageKey> = [
        .migrationMalformed, .databaseDamaged, .databaseReadOnlyOutdated, .importRejected, .privacyPolicy,
    ]

    @Test func messagesNameNoOptionAndNoCommand() {
        let command = #/--[a-z]|clinic (login|privacy|admin|staff|doctors|profile|messages|serve|geocode|find|init|clinics|book)\b/#
        for key in MessageKey.allCases where !Self.commandLineOnly.contains(key) {
            for language in Language.allCases {
                let text = Strings.text(key, language, ["A", "B", "C", "D"])
                #expect(text.firstMatch(of: command) == nil, "\(key) in \(language): \(text)")
            }
        }
    }
}
