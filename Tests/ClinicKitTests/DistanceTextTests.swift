import Foundation
import Testing
@testable import ClinicKit

/// Distances in the unit of the language's readers (issue 30): miles in English, kilometres in
/// Russian, the unit always said.
@Suite(.storeFree) struct DistanceTextTests {
    @Test(arguments: [
        (7_215.0, Language.en, "4.5 mi"), (559, .en, "0.3 mi"), (161, .en, "0.1 mi"), (100, .en, "330 ft"), (0, .en, "0 ft"),
        (22_700, .en, "14 mi"), (16_093.44, .en, "10 mi"), (15_900, .en, "9.9 mi"),
        (7_215, .ru, "7,2 км"), (559, .ru, "559 м"), (999.4, .ru, "999 м"), (1_000, .ru, "1,0 км"), (-5, .ru, "0 м"),
        (.nan, .en, "0 ft"), (.infinity, .ru, "0 м"),
    ])
    func distancesSayTheirUnit(metres: Double, language: Language, text: String) {
        #expect(DistanceText.text(metres, language) == text)
    }
}
