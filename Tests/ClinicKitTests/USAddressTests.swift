import Foundation
import Testing
@testable import ClinicKit

/// Street addresses in the 50 largest U.S. cities (issue 42): written as the Postal Service
/// writes them and as people type them (with or without the ZIP code, a unit, commas), each
/// resolves offline to a place in its state near the city, whatever the gazetteer calls the
/// city ("New York City", "Washington" in the District of Columbia).
@Suite struct USAddressTests {
    /// A city hall (or as well known) address, and the city's centre.
    struct Address: Sendable {
        let street: String, city: String, state: String, zip: String
        let latitude: Double, longitude: Double
    }

    static let addresses: [Address] = [
        Address(street: "350 Fifth Avenue", city: "New York", state: "NY", zip: "10118", latitude: 40.7128, longitude: -74.0060),
        Address(street: "200 N Spring St", city: "Los Angeles", state: "CA", zip: "90012", latitude: 34.0522, longitude: -118.2437),
        Address(street: "121 N LaSalle St", city: "Chicago", state: "IL", zip: "60602", latitude: 41.8781, longitude: -87.6298),
        Address(street: "901 Bagby St", city: "Houston", state: "TX", zip: "77002", latitude: 29.7604, longitude: -95.3698),
        Address(street: "200 W Washington St", city: "Phoenix", state: "AZ", zip: "85003", latitude: 33.4484, longitude: -112.0740),
        Address(street: "1400 John F Kennedy Blvd", city: "Philadelphia", state: "PA", zip: "19107",
                latitude: 39.9526, longitude: -75.1652),
        Address(street: "100 Military Plaza", city: "San Antonio", state: "TX", zip: "78205", latitude: 29.4241, longitude: -98.4936),
        Address(street: "202 C St", city: "San Diego", state: "CA", zip: "92101", latitude: 32.7157, longitude: -117.1611),
        Address(street: "1500 Marilla St", city: "Dallas", state: "TX", zip: "75201", latitude: 32.7767, longitude: -96.7970),
        Address(street: "117 W Duval St", city: "Jacksonville", state: "FL", zip: "32202", latitude: 30.3322, longitude: -81.6557),
        Address(street: "301 W 2nd St", city: "Austin", state: "TX", zip: "78701", latitude: 30.2672, longitude: -97.7431),
        Address(street: "200 Texas St", city: "Fort Worth", state: "TX", zip: "76102", latitude: 32.7555, longitude: -97.3308),
        Address(street: "200 E Santa Clara St", city: "San Jose", state: "CA", zip: "95113", latitude: 37.3382, longitude: -121.8863),
        Address(street: "90 W Broad St", city: "Columbus", state: "OH", zip: "43215", latitude: 39.9612, longitude: -82.9988),
        Address(street: "600 E 4th St", city: "Charlotte", state: "NC", zip: "28202", latitude: 35.2271, longitude: -80.8431),
        Address(street: "200 E Washington St", city: "Indianapolis", state: "IN", zip: "46204", latitude: 39.7684, longitude: -86.1581),
        Address(street: "1 Dr Carlton B Goodlett Pl", city: "San Francisco", state: "CA", zip: "94102",
                latitude: 37.7749, longitude: -122.4194),
        Address(street: "600 4th Ave", city: "Seattle", state: "WA", zip: "98104", latitude: 47.6062, longitude: -122.3321),
        Address(street: "1437 Bannock St", city: "Denver", state: "CO", zip: "80202", latitude: 39.7392, longitude: -104.9903),
        Address(street: "200 N Walker Ave", city: "Oklahoma City", state: "OK", zip: "73102", latitude: 35.4676, longitude: -97.5164),
        Address(street: "1 Public Square", city: "Nashville", state: "TN", zip: "37201", latitude: 36.1627, longitude: -86.7816),
        Address(street: "1600 Pennsylvania Ave NW", city: "Washington", state: "DC", zip: "20500", latitude: 38.9072, longitude: -77.0369),
        Address(street: "300 N Campbell St", city: "El Paso", state: "TX", zip: "79901", latitude: 31.7619, longitude: -106.4850),
        Address(street: "495 S Main St", city: "Las Vegas", state: "NV", zip: "89101", latitude: 36.1699, longitude: -115.1398),
        Address(street: "1 City Hall Sq", city: "Boston", state: "MA", zip: "02201", latitude: 42.3601, longitude: -71.0589),
        Address(street: "2 Woodward Ave", city: "Detroit", state: "MI", zip: "48226", latitude: 42.3314, longitude: -83.0458),
        Address(street: "1221 SW 4th Ave", city: "Portland", state: "OR", zip: "97204", latitude: 45.5152, longitude: -122.6784),
        Address(street: "527 W Jefferson St", city: "Louisville", state: "KY", zip: "40202", latitude: 38.2527, longitude: -85.7585),
        Address(street: "125 N Main St", city: "Memphis", state: "TN", zip: "38103", latitude: 35.1495, longitude: -90.0490),
        Address(street: "100 N Holliday St", city: "Baltimore", state: "MD", zip: "21202", latitude: 39.2904, longitude: -76.6122),
        Address(street: "200 E Wells St", city: "Milwaukee", state: "WI", zip: "53202", latitude: 43.0389, longitude: -87.9065),
        Address(street: "1 Civic Plaza NW", city: "Albuquerque", state: "NM", zip: "87102", latitude: 35.0844, longitude: -106.6504),
        Address(street: "255 W Alameda St", city: "Tucson", state: "AZ", zip: "85701", latitude: 32.2226, longitude: -110.9747),
        Address(street: "2600 Fresno St", city: "Fresno", state: "CA", zip: "93721", latitude: 36.7378, longitude: -119.7871),
        Address(street: "915 I St", city: "Sacramento", state: "CA", zip: "95814", latitude: 38.5816, longitude: -121.4944),
        Address(street: "20 E Main St", city: "Mesa", state: "AZ", zip: "85201", latitude: 33.4152, longitude: -111.8315),
        Address(street: "414 E 12th St", city: "Kansas City", state: "MO", zip: "64106", latitude: 39.0997, longitude: -94.5786),
        Address(street: "55 Trinity Ave SW", city: "Atlanta", state: "GA", zip: "30303", latitude: 33.7490, longitude: -84.3880),
        Address(street: "1819 Farnam St", city: "Omaha", state: "NE", zip: "68183", latitude: 41.2565, longitude: -95.9345),
        Address(street: "30 S Nevada Ave", city: "Colorado Springs", state: "CO", zip: "80903", latitude: 38.8339, longitude: -104.8214),
        Address(street: "222 W Hargett St", city: "Raleigh", state: "NC", zip: "27601", latitude: 35.7796, longitude: -78.6382),
        Address(street: "411 W Ocean Blvd", city: "Long Beach", state: "CA", zip: "90802", latitude: 33.7701, longitude: -118.1937),
        Address(street: "2401 Courthouse Dr", city: "Virginia Beach", state: "VA", zip: "23456", latitude: 36.8529, longitude: -75.9780),
        Address(street: "3500 Pan American Dr", city: "Miami", state: "FL", zip: "33133", latitude: 25.7617, longitude: -80.1918),
        Address(street: "1 Frank H Ogawa Plaza", city: "Oakland", state: "CA", zip: "94612", latitude: 37.8044, longitude: -122.2712),
        Address(street: "350 S 5th St", city: "Minneapolis", state: "MN", zip: "55415", latitude: 44.9778, longitude: -93.2650),
        Address(street: "175 E 2nd St", city: "Tulsa", state: "OK", zip: "74103", latitude: 36.1540, longitude: -95.9928),
        Address(street: "1600 Truxtun Ave", city: "Bakersfield", state: "CA", zip: "93301", latitude: 35.3733, longitude: -119.0187),
        Address(street: "455 N Main St", city: "Wichita", state: "KS", zip: "67202", latitude: 37.6872, longitude: -97.3301),
        Address(street: "101 W Abram St", city: "Arlington", state: "TX", zip: "76010", latitude: 32.7357, longitude: -97.1081),
    ]

    /// The states' names, as a result's `admin1` gives them.
    static let stateNames = [
        "AZ": "Arizona", "CA": "California", "CO": "Colorado", "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia",
        "IL": "Illinois", "IN": "Indiana", "KS": "Kansas", "KY": "Kentucky", "MA": "Massachusetts", "MD": "Maryland",
        "MI": "Michigan", "MN": "Minnesota", "MO": "Missouri", "NC": "North Carolina", "NE": "Nebraska", "NM": "New Mexico",
        "NV": "Nevada", "NY": "New York", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
        "TN": "Tennessee", "TX": "Texas", "VA": "Virginia", "WA": "Washington", "WI": "Wisconsin",
    ]

    /// The ways one address is written: the Postal Service's one line, without the ZIP code,
    /// without commas (upper case, as on an envelope, and as typed), with a unit.
    static func forms(_ address: Address, unit: String) -> [String] {
        let (street, city, state, zip) = (address.street, address.city, address.state, address.zip)
        return [
            "\(street), \(city), \(state) \(zip)",
            "\(street), \(city), \(state)",
            "\(street) \(city) \(state) \(zip)".uppercased(),
            "\(street) \(city) \(state)",
            "\(street) \(unit), \(city), \(state)",
            "\(street), \(unit), \(city), \(state)",
            "\(street) \(unit) \(city) \(state)",
        ]
    }

    func service() throws -> GeocodingService {
        let system = try makeSystem()
        let gazetteer = LazyGazetteer(data: projectData)
        return GeocodingService(database: system.database, gazetteer: gazetteer, now: { testNow })
    }

    @Test func streetAddressesInTheLargestCitiesFindTheirCity() throws {
        #expect(Self.addresses.count == 50)
        let geocoder = try service()
        let units = ["Apt 4B", "Suite 200", "#12", "Ste 5", "Fl 3"]
        for (index, address) in Self.addresses.enumerated() {
            let centre = try #require(Coordinate(latitude: address.latitude, longitude: address.longitude))
            for form in Self.forms(address, unit: units[index % units.count]) {
                let result: GeocodeResult
                do { result = try geocoder.resolve(form) } catch {
                    Issue.record("\(form): \(error)")
                    continue
                }
                #expect(result.source == "gazetteer" && ["city", "postcode"].contains(result.precision), "\(form): \(result)")
                #expect(result.country == "US" && result.admin1 == Self.stateNames[address.state],
                        "\(form): \(result.placeName ?? "?") is not in \(address.state)")
                let distance = Geodesy.distance(result.coordinate, centre)
                #expect(distance < 40_000, "\(form): \(result.placeName ?? "?") is \(Int(distance / 1000)) km from \(address.city)")
            }
        }
    }

    /// The city is read from the parts after the street, not from the street's own words: a
    /// town that does not exist stays unknown ("Washington" is not taken from the street), and
    /// the state still binds.
    @Test func theStreetNeverStandsInForTheCity() throws {
        let geocoder = try service()
        for unknown in ["200 E Washington St, Qwertyuiopville, IN", "200 E Washington St Qwertyuiopville IN",
                        "1600 Pennsylvania Ave NW, Washington, OR"] {
            #expect(expectError(.geocodeFailed) { _ = try geocoder.resolve(unknown) } != nil, "\(unknown)")
        }
    }

    /// A city that is a division of its own name, after a street, is the city, not only its
    /// division; without a street, an unknown town in it is still nobody.
    @Test func aCityThatIsItsOwnDivisionFollowsAStreet() throws {
        let geocoder = try service()
        let places = [("ул. Ленина 5, Минск", "BY", 53.90, 27.57), ("Unter den Linden 1, Berlin", "DE", 52.52, 13.40),
                      ("1600 Pennsylvania Ave NW, DC", "US", 38.91, -77.04)]
        for (address, country, latitude, longitude) in places {
            let result = try geocoder.resolve(address)
            let centre = try #require(Coordinate(latitude: latitude, longitude: longitude))
            #expect(result.country == country && Geodesy.distance(result.coordinate, centre) < 40_000, "\(address): \(result)")
        }
        #expect(expectError(.geocodeFailed) { _ = try geocoder.resolve("Qwertyuiopville, DC") } != nil)
    }

    /// An address without commas is still a street address: the street-level geocoder, when
    /// there is one, is asked before the gazetteer's town or ZIP centroid.
    @Test func anAddressWithoutCommasGoesToTheStreetGeocoder() {
        #expect(GeocodingService.hasStreetPart("350 Fifth Avenue New York NY 10118"))
        #expect(GeocodingService.hasStreetPart("1600 Pennsylvania Ave NW, Washington, DC"))
        for place in ["Boston, MA 02115", "90027", "Washington DC", "New York NY 10118", "350 Fifth"] {
            #expect(!GeocodingService.hasStreetPart(place), "\(place)")
        }
    }
}
