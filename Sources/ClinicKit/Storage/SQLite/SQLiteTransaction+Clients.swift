import Foundation
import GRDB

// The client area of the seam on SQLite.

extension SQLiteTransaction {
    func clientExists(id: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)"), arguments: [id]) ?? false
    }
}
