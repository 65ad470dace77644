import Testing
@testable import ClinicKit

@Suite(.storeFree) struct ValidatorTests {
    let validator = Validator(cities: ["Los Angeles", "São Paulo", "Минск"])

    @Test func lettersAcceptAnyAlphabetWithHyphensAndApostrophes() {
        for name in ["Anna", "Zoë", "José", "Anne-Marie", "O'Brien", "Жанна", "Пётр-Иван", "Mary Jane", "d'Artagnan"] {
            #expect(validator.containsOnlyLetters(name), "\(name)")
        }
    }

    @Test func lettersRejectDigitsSymbolsAndStraySeparators() {
        for name in ["", " ", "Anna1", "R2-D2", "-Anna", "Anna-", "An--na", "A''B", "Anna!", "Anna\u{0007}", "'"] {
            #expect(!validator.containsOnlyLetters(name), "\(name)")
        }
    }

    @Test func numbersAreAsciiDigitsOnly() {
        #expect(validator.containsOnlyNumbers("0123"))
        #expect(!validator.containsOnlyNumbers(""))
        #expect(!validator.containsOnlyNumbers("12a"))
        #expect(!validator.containsOnlyNumbers("-1"))
        #expect(!validator.containsOnlyNumbers("١٢")) // Arabic-Indic digits are not ASCII
    }

    @Test func emptinessIgnoresWhitespace() {
        #expect(validator.isEmpty(""))
        #expect(validator.isEmpty(" \n\t"))
        #expect(!validator.isEmpty(" a "))
    }

    @Test func passwordsMatchExactly() {
        #expect(validator.passwordsMatch("abc", "abc"))
        #expect(!validator.passwordsMatch("abc", "abC"))
    }

    @Test func passwordRulesSayWhichRuleFailed() throws {
        let policy = Validator(commonPasswords: try Validator.commonPasswords(in: projectRoot.appendingPathComponent("Data")))
        #expect(policy.commonPasswords.count == 30_000)
        #expect(policy.passwordProblem("short1") == .passwordTooShort)
        #expect(policy.passwordProblem(String(repeating: "ab", count: 64)) == nil, "128 characters")
        #expect(policy.passwordProblem(String(repeating: "a1", count: 65)) == .passwordTooLong)
        #expect(policy.passwordProblem("xx-annasmith-99", login: "AnnaSmith") == .passwordContainsLogin)
        #expect(policy.passwordProblem("i-am-ANNA-1990", login: "xyz", name: "Anna") == .passwordContainsName)
        #expect(policy.passwordProblem("smithsonian-42", name: "Jo", surname: "Smith") == .passwordContainsName)
        #expect(policy.passwordProblem("jo-jo-jo-jo-jo", name: "Jo") == nil, "names under 3 letters are not checked")
        #expect(policy.passwordProblem("Password123") == .passwordCommon, "common, whatever the case")
        #expect(policy.passwordProblem("qwertyuiop") == .passwordCommon)
        #expect(policy.passwordProblem("correct horse battery staple") == nil, "a passphrase of words is fine")
        #expect(policy.passwordProblem("correct-horse-42", login: "anna", name: "Anna", surname: "Smith") == nil)
        #expect(policy.isStrongPassword("correct-horse-42"))
        #expect(!policy.isStrongPassword("password"))
    }

    @Test func citiesCompareWithoutCaseOrAccents() {
        #expect(validator.isKnownCity("los angeles"))
        #expect(validator.isKnownCity("SAO PAULO"))
        #expect(validator.isKnownCity("минск"))
        #expect(!validator.isKnownCity("Hanford"))
        #expect(Validator().isKnownCity("Anywhere"), "an empty CITIES list checks nothing")
    }

    @Test func loginsHousesAndStreets() {
        #expect(validator.isValidLogin("anna.smith@home"))
        #expect(validator.isValidLogin("анна_1"))
        #expect(!validator.isValidLogin("an"))
        #expect(!validator.isValidLogin("anna smith"))
        #expect(!validator.isValidLogin("x'; DROP TABLE clients; --"))
        #expect(validator.isValidHouse("12"))
        #expect(validator.isValidHouse("12A"))
        #expect(validator.isValidHouse("12/3"))
        #expect(!validator.isValidHouse("A12"))
        #expect(!validator.isValidHouse(""))
        #expect(validator.isValidStreet("Main Street"))
        #expect(validator.isValidStreet("5th Avenue"))
        #expect(!validator.isValidStreet("123"))
        #expect(!validator.isValidStreet("Main\u{0000}Street"))
    }

    /// Issue 55 (A6): a name's limit counts code points and bytes, not what a screen shows as
    /// one character; a name must show letters; look-alike scripts are not mixed in a word.
    @Test func namesAreBoundedInCodePointsAndShowWhatTheyAre() {
        let bomb = "A" + String(repeating: "\u{0301}", count: 20_000)
        let refused = [bomb, "\u{3164}", "\u{FFA0}", "\u{3164}Anna", "An\u{200D}na", "\u{0301}\u{0301}", "\u{0410}nna",
                       "Ma\u{0301}\u{0301}\u{0301}\u{0301}\u{0301}ria", String(repeating: "ab", count: 51), "\u{2800}"]
        for name in refused {
            #expect(validator.problem(.name, name)?.key == .fieldLettersOnly, "\(name.unicodeScalars.count) scalars")
        }
        // NFD spelling, Vietnamese's two marks, a Persian name with its non-joiner, Russian, and
        // a name of each of two scripts in two words are all fine.
        for name in ["Jose\u{0301}", "Nguy\u{1EC5}n", "Vi\u{1EC7}t", "\u{0645}\u{06CC}\u{200C}\u{0646}\u{0627}", "Пётр",
                     "Anna Анна", String(repeating: "a", count: 100)] {
            #expect(validator.problem(.name, name) == nil, "\(name)")
        }
        #expect(Text.checkedPersonName("Dr. Иван Petrov", maximum: 200) != nil)
        #expect(Text.checkedPersonName("Dr. Иvan", maximum: 200) == nil)
        #expect(Text.checkedLabel("\u{3164}", maximum: 100) == nil && Text.checkedLabel("30 min", maximum: 100) == "30 min")
        #expect(Text.checkedLabel("Cafe\u{0301}", maximum: 100) == "Caf\u{00E9}", "stored in NFC")
    }
}
