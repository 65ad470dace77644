import Testing
@testable import ClinicServer

/// The web app's label tables (issue 55): a key written twice would trap at first use in a
/// dictionary literal; written as pairs, every repeat is named here, and both languages have
/// the same keys.
@Suite struct WebTextTests {
    @Test func everyLabelIsWrittenOnceInEachLanguageAndBothHaveTheSameKeys() {
        #expect(WebText.duplicates(WebText.englishPairs).isEmpty, "repeated in English: \(WebText.duplicates(WebText.englishPairs))")
        #expect(WebText.duplicates(WebText.russianPairs).isEmpty, "repeated in Russian: \(WebText.duplicates(WebText.russianPairs))")
        let english = Set(WebText.en.keys), russian = Set(WebText.ru.keys)
        #expect(english.subtracting(russian).isEmpty, "no Russian for \(english.subtracting(russian).sorted())")
        #expect(russian.subtracting(english).isEmpty, "no English for \(russian.subtracting(english).sorted())")
        // The check itself finds a repeat.
        #expect(WebText.duplicates(["a": "1", "b": "2", "a": "3"]) == ["a"])
        #expect(WebText.table(["a": "1", "a": "3"]) == ["a": "1"])
    }
}
