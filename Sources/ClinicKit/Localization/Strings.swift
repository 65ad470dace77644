import Foundation

/// Every text a person reads, by key, in English and Russian. `{0}`, `{1}`… are replaced by
/// the message's arguments; `{0f}` by the argument read as a term (a field name or a status) and translated.
public enum MessageKey: String, Sendable, CaseIterable, Codable {
    // Storage and migrations
    case migrationMalformed, migrationForeignKeys, migrationsMissing, migrationSequence, migrationChanged, migrationTargetRange
    case databaseTooNew, databaseUnavailable, databaseBusy, storageFailure, storedValueUnreadable, resourcesMissing, internalError
    case geocodeSuggestion, geocodeAmbiguous, geocodeAlternative, whichPlace, choosePlace, zoneChangesNote, zoneChangesHeading, zoneChangeLine, headerZone
    case databaseDamaged, databaseReadOnly, databaseReadOnlyOutdated, databaseInsecure, sessionFileLink, sessionFileInsecureEnded
    // Sessions
    case sessionFileUnwritable, sessionFileInsecure, notLoggedIn, invalidCredentials
    // Times
    case invalidTime, timeDoesNotExist, invalidDay
    // Import
    case importNoHeader, importMissingColumns, importInvalidUTF8, importUnterminatedQuote, importBadQuote
    case importDuplicateId, importColumnCount, importControlCharacter, importEmptyId, importEmptyName
    case importFieldTooLong, importBadCoordinates, importBadFlag, importBadTimeZone, importRejected
    // Directory
    case clinicExists, limitRange, clinicNotFound, specializationInvalid, specializationUnknown, departmentExists, doctorNameInvalid
    case workingHoursInvalid, departmentNotFound, doctorNotFound, invalidId, fileUnreadable
    // Registration
    case loginInvalid, fieldEmpty, fieldLettersOnly, streetInvalid, houseInvalid, cityUnknown, passwordsDiffer
    case passwordTooShort, passwordTooLong, passwordContainsName, passwordCommon, passwordContainsLogin, privacyRequired
    case accountLocked, backupExists, backupUnwritable, backupDamaged, backupNotOurs, backupSetting, backupDone
    case restoreDone, checkOk, checkFailed, autoBackupFailed
    case promptOldPassword, passwordChanged, accountDeleted, privacyChanged
    case accessLogNone, accessLogLine, auditExportNone
    case staffRowInvalid, staffForbidden, staffDoctorRequired, staffDoctorOnlyForDoctors, staffNotFound, staffNotLoggedIn
    case staffReasonRequired, staffReasonInvalid, staffAdded, staffLoggedIn, staffLoggedOut, staffWhoami, staffDayHeader
    case staffDayEmpty, staffDayLine, staffActed, staffDisabled, staffAccountLine, staffPatientNotFound, staffPatientUnavailable, staffBooked
    case staffHoursConflict, staffHoursChanged, staffHoursSet, staffHoursLine, staffDoctorLine
    case visitTypeNotFound, visitTypeNameInvalid, visitTypeDurationInvalid, visitTypePriceInvalid, visitTypeLine, visitTypesNone
    case chooseVisitType, visitTypeChoice
    case keyUnwritable, keyInsecure, keyUnreadable, keyMissing, keyWrong, personalUnreadable, backupOtherKey, keyRotated
    case auditKeyUnreadable, auditKeyMissing, auditKeyWrong, auditKeyMismatch, auditNotKeyed, auditRowUnreadable
    case auditRowsUnreadable, checkAuditUnverified
    case loginTaken, clientNotFound, missingOption, passwordNeeded, passwordEmpty
    // Appointments
    case cannotReschedule, cannotCancel, notesTooLong, notesControl, appointmentNotFound, notYourAppointment
    case slotInPast, slotTaken, slotOutsideHours, overlapping, overlappingUnknown, timeHasSeconds, importBadHeader
    case slotTooSoon, slotTooFar, tooLate, limitReached, transitionRefused, notStartedYet, daysRange, settingUnknown, settingRange
    case exceptionInvalid, exceptionNotFound, noSlots, clinicTime, headerAvailable, headerEvent, headerWhen, headerActor
    case available, taken, eventBooked, eventRescheduled, settingLine, exceptionAdded, exceptionRemoved, dayOff
    case statusSet, findNone, findVisitTooLong, findIncomplete, beforeInPast, doctorUnknown, exceptionOverlaps, headerDate, actorPatient, actorStaff, tooSoon
    // Geography
    case coordinatesInvalid, coordinatesOutOfRange, addressInvalid, geocodeFailed, geocoderUnavailable
    case geocoderBadAnswer, geocoderTimeout, locationChoice, noHomeCoordinates, radiusInvalid, limitBetween
    case headerDistance, nearestNone, chooseClinic, geocodeLine, gazetteerMissing, geocoderSetting, cityInvalid
    // Privacy
    case privacyPolicy
    // Messages, e-mail and calendars (MessageStrings.swift)
    case messageDetails, messageBookedSubject, messageBookedBody, messageRescheduledSubject, messageRescheduledBody
    case messageCancelledSubject, messageCancelledBody, messageClinicCancelledSubject, messageClinicCancelledBody
    case messageZoneSubject, messageZoneBody, messageReminderSubject, messageReminderBody, messageClinicSubject
    case messageTextInvalid, emailCodeSubject, emailCodeBody, emailInvalid, emailCodeWrong, emailNoPending, emailCodeSent
    case emailConfirmed, emailRemoved, emailNone, emailLine, emailPendingLine, messagesNone, messageLine, messageUnreadMark
    case messageMarkedRead, messageNotFound, messagesUnread, calendarURL, calendarTokenInvalid, staffMessageSent
    case staffMessageTarget, icsSummary, icsDescription, icsAlarm, deliverDone, deliverNoSMTP, mailSettingInvalid, mailFailed
    case staffNoReason, emailCodeTooSoon, menuMessages, menuMessagesUnread, messageCalendarRenewedSubject, messageCalendarRenewedBody
    // HTTP API
    case apiFieldRequired, apiFieldWholeNumber, apiFieldBoolean, apiFieldChoice, apiFieldText, apiFieldType, apiBodyNotJSON, apiDuplicateKey
    case apiBodyInvalid, apiTooLarge, apiMediaType, apiRateLimited, apiRouteNotFound
    case apiMethodNotAllowed, apiKeyReused, apiKeyInvalid, apiCursorInvalid, apiSessionNotFound
    case serveBadSetting, serveNeedsTLS, serveListening, serveInsecure, tlsFileInvalid, serveFailed, serveTLSPair, apiNotLoggedIn
    // CLI output
    case headerId, headerName, headerCity, headerKind, headerTimeZone, headerSpecialization
    case headerDoctors, headerClinic, headerDepartment, headerDoctor, headerStart, headerStatus
    case headerHours
    case kindHospital, kindPediatric, kindClinic
    case noClinics, noDepartments, noDoctors, noAppointments
    case registered, loggedIn, loggedOut, notLoggedInInfo, whoami, booked, rescheduled, cancelled
    case initDone, initAlready, migrated, migrateNothing, importDone, importSkipped, importProblem
    case promptField, promptPassword, promptPasswordAgain, promptAccept
    case statusScheduled, statusConfirmed, statusCompleted, statusCancelled, statusNoShow, statusArrived, statusInProgress
    case weekdays, loadingDirectory, demoNote, progressClinics, usageNoCommand
    // Interactive session (SessionStrings.swift)
    case sessionNoJSON, sessionTitle, sessionHint, sessionBye, sessionEnded, startTitle, mainTitle
    case menuLogIn, menuRegister, menuLanguage, menuQuit, menuBack, menuNearest, menuClinicInfo, menuFind, menuBook
    case menuAppointments, menuReschedule, menuCancel, menuProfile, menuLogOut, menuPassword, menuDeleteAccount
    case labelLogin, labelPassword, labelPasswordAgain, labelOldPassword, labelName, labelSurname, labelStreet
    case labelHouse, labelCity, labelCityHint, labelAddress, labelCoordinates, labelClinicId, labelHomeClinic, labelLanguage
    case answerTooLong, answerUnreadable, answerEmpty, answerYesNo, answerDefaultYes, answerDefaultNo, pickOne, pickNumber, pickInvalid
    case registerTitle, registeredSession, privacyDeclined, askAcceptPrivacy, chooseHomeClinic
    case originTitle, originMine, originAddress, originCoordinates, foundPlace, nearestTitle, detailsHint
    case whichClinic, clinicHome, clinicNearMe, clinicById, clinicPhone, clinicLocalTime, clinicDistance, askBookHere
    case chooseDepartment, chooseSpecialization, searching, foundSlotsTitle, findNoneSession, noFreeSlots, chooseDay
    case clinicZoneNote, chooseTime, askBook, notBooked, upcomingTitle, pastTitle, rescheduleTitle, cancelTitle
    case askReschedule, askCancel, notChanged, profileTitle, profileWhat, headerField, headerValue, editField
    case editHomeClinic, profileSaved, deleteWarning, askDelete
}

public enum Strings {
    public static func text(_ key: MessageKey, _ language: Language, _ arguments: [String] = []) -> String {
        let table = language == .ru ? ru : en
        return render(table[key] ?? en[key] ?? key.rawValue, language, arguments)
    }

    /// A template with its arguments in place: `{0}`, `{1}`… as they are, `{0f}` read as a term
    /// (a field name or a status) and `{0s}` as specialization keys, both in the language. The
    /// fronts render their own words with it, so that their templates mean what these do.
    public static func render(_ template: String, _ language: Language, _ arguments: [String]) -> String {
        guard !arguments.isEmpty else { return template }
        // One pass over the template, in Swift: Foundation's replacingOccurrences was most of
        // the CPU time of the messages a booking writes. An argument is never read as a
        // template itself ("{1}" inside the first argument stays as it is).
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let after = rest[rest.index(after: open)...]
            let digitsEnd = after.firstIndex { !($0.isASCII && $0.isNumber) } ?? after.endIndex
            var close = digitsEnd
            let asTerm = close < after.endIndex && after[close] == "f"
            let asSpecializations = close < after.endIndex && after[close] == "s"
            if asTerm || asSpecializations { close = after.index(after: close) }
            if digitsEnd > after.startIndex, close < after.endIndex, after[close] == "}",
               let index = Int(after[after.startIndex..<digitsEnd]), index < arguments.count {
                // An argument is data (a name, a reason): shown, never obeyed (`withoutControls`).
                let argument = arguments[index].withoutControls(keeping: ["\n"])
                result += asTerm ? term(argument, language)
                    : asSpecializations ? specializations(argument, language) : argument
                rest = after[after.index(after: close)...]
            } else {
                result.append("{")
                rest = after
            }
        }
        result += rest
        return result
    }

    /// `{Ns}`: an argument of specialization keys, comma-separated, as names in the language.
    static func specializations(_ keys: String, _ language: Language) -> String {
        keys.split(separator: ",").map { Specialization.displayName(String($0), language).lowercased() }.joined(separator: ", ")
    }

    /// A field name or status used as an argument, in the language.
    static func term(_ field: String, _ language: Language) -> String {
        guard language == .ru else { return field.replacingOccurrences(of: "_", with: " ") }
        let names = ["scheduled": "запланирована", "confirmed": "подтверждена", "completed": "состоялась",
                     "cancelled": "отменена", "no_show": "неявка",
                     "name": "имя", "surname": "фамилия", "street": "улица", "house": "дом", "city": "город",
                     "login": "логин", "password": "пароль", "address": "адрес", "description": "описание",
                     "phone": "телефон", "website": "сайт", "category": "категория", "zip": "индекс",
                     "state": "штат", "time_zone": "часовой пояс", "external_id": "внешний id",
                     "lat": "широта", "lon": "долгота"]
        return names[field] ?? field
    }

    public static let en = coreEN.merging(sessionEN) { core, _ in core }.merging(messageEN) { core, _ in core }
    public static let ru = coreRU.merging(sessionRU) { core, _ in core }.merging(messageRU) { core, _ in core }

    static let coreEN: [MessageKey: String] = [
        .migrationMalformed: "Migration file {0} is malformed: it needs one '-- migrate:up' and then one '-- migrate:down' line.",
        .migrationForeignKeys: "Moving the schema to version {0} would leave rows pointing to rows that do not exist; nothing was changed.",
        .migrationsMissing: "The migrations folder {0} cannot be read.",
        .migrationSequence: "Migrations must be numbered 0001, 0002, … without gaps; problem at {0}.",
        .migrationChanged: "Migration {0} was changed after it was applied to this database. Restore the original file; the database was not modified.",
        .migrationTargetRange: "Cannot migrate to version {0}: versions run from 0 to {1}.",
        .databaseTooNew: "This database has migration {0}, newer than this program knows (latest {1}). Use a newer clinic; the database was not modified.",
        .databaseUnavailable: "Cannot open the database at {0}: {1}",
        .databaseBusy: "The database is busy with another command. Try again in a moment.",
        .storageFailure: "The database reported an error: {0}. Nothing was changed.",
        .storedValueUnreadable: "A stored value cannot be read: {0} in row {1} is not of the type this program writes. The database was changed outside this program; restore a backup or correct the value. Nothing was changed.",
        .resourcesMissing: "Cannot find the Data/ and Migrations/ folders. Set CLINIC_RESOURCES to the project folder.",
        .internalError: "Internal error: {0}",
        .geocodeSuggestion: "Cannot find '{0}'. Did you mean {1}? Type '{2}'.",
        .geocodeAmbiguous: "Using {0}; also: {1}.",
        .geocodeAlternative: "{0} — type '{1}'",
        .whichPlace: "Which {0}?",
        .choosePlace: "Place [1-{0}, Enter for 1]: ",
        .zoneChangesNote: "Clinic time zones now come from time-zone boundaries, and some changed: {0} booked before the change now fall at another local time. 'clinic admin check' lists them, so that staff can tell those patients.",
        .zoneChangesHeading: "Upcoming appointments booked before their clinic's time zone changed ({0}): tell these patients the new local time.",
        .zoneChangeLine: "appointment {0} at {1} ({2}): {3} in {4} is {5} in {6}",
        .headerZone: "Time zone",
        .databaseDamaged: "The database {0} is damaged ({1}). Nothing was written: run 'clinic admin check' to see what is wrong, and restore a sound backup.",
        .databaseReadOnly: "The database {0} is read-only for you: this command would change it. Nothing was changed.",
        .databaseReadOnlyOutdated: "The database {0} is read-only for you and needs migrating to this version of clinic; ask its owner to run 'clinic admin migrate'.",
        .databaseInsecure: "{0} can be read by other users and cannot be made private. Fix it with: chmod 600 {0}",
        .sessionFileLink: "The session file {0} is a symbolic link; refused. Remove it and log in again.",
        .sessionFileInsecureEnded: "The session file {0} could be read by other users: the session was ended and the file deleted. Log in again.",
        .sessionFileUnwritable: "Cannot write the session file {0}.",
        .sessionFileInsecure: "The session file {0} can be read by other users. Fix it with: chmod 600 {0}",
        .notLoggedIn: "You are not logged in.",
        .invalidCredentials: "Wrong login or password.",
        .invalidTime: "Cannot read the time '{0}'. Use ISO 8601 with an offset (2026-11-23T09:20:00-05:00 or …Z) or 'YYYY-MM-DD HH:MM' in the clinic's time.",
        .timeDoesNotExist: "The time {0} does not exist in {1} (the clocks skip it on that day).",
        .invalidDay: "Cannot read the day '{0}'. Use YYYY-MM-DD.",
        .importNoHeader: "The file is empty: a header line naming the columns is required.",
        .importMissingColumns: "The header lacks the required columns: {0}.",
        .importInvalidUTF8: "the line is not valid UTF-8",
        .importUnterminatedQuote: "a quoted field is never closed",
        .importBadQuote: "a character follows a closing quote",
        .importDuplicateId: "external id {0} already appears on line {1}",
        .importColumnCount: "{0} fields where the header has {1}",
        .importControlCharacter: "the {0f} field contains a control character",
        .importEmptyId: "the external id is empty or longer than 64 characters",
        .importEmptyName: "the name is empty",
        .importFieldTooLong: "the {0f} field is too long",
        .importBadCoordinates: "coordinates '{0}', '{1}' are not numbers within ±90 and ±180",
        .importBadFlag: "the {0f} field must be 0/1, true/false or yes/no, not '{1}'",
        .importBadTimeZone: "'{0}' is not an IANA time zone",
        .importRejected: "The file has {0} bad rows; nothing was imported. Fix them, or use --skip-invalid to import the valid rows.",
        .clinicExists: "A clinic with external id {0} already exists.",
        .limitRange: "The limit must be at least 1 (got {0}).",
        .clinicNotFound: "There is no clinic {0}.",
        .specializationInvalid: "The specialization must be 1 to 100 characters.",
        .specializationUnknown: "No clinic has a '{0}' department. Did you mean: {1s}?",
        .departmentExists: "The clinic already has a {0} department.",
        .doctorNameInvalid: "The doctor's name must be 1 to 200 characters, with no control characters.",
        .workingHoursInvalid: "Working hours need a weekday 1-7, a start before the end within the day, a slot of 5 to 480 minutes, and no overlap with other hours of the same weekday.",
        .departmentNotFound: "There is no department {0}.",
        .doctorNotFound: "There is no doctor {0} in this department.",
        .invalidId: "'{0}' is not a valid id: use a positive whole number.",
        .fileUnreadable: "Cannot read the file {0}.",
        .loginInvalid: "The login must be 3 to 64 letters, digits or the characters . _ - @.",
        .fieldEmpty: "The {0f} must not be empty.",
        .fieldLettersOnly: "The {0f} may contain only letters, spaces, hyphens and apostrophes (at most 100).",
        .streetInvalid: "The street must be 1 to 100 characters and contain a letter.",
        .houseInvalid: "The house number must start with a digit, like 12, 12A or 12/3.",
        .cityUnknown: "The city '{0}' is not known (neither the gazetteer nor the clinic directory has it). Check the spelling, or add the state or country: 'Portland, ME'.",
        .cityInvalid: "The city must be 1 to 100 letters, spaces, hyphens, apostrophes or dots, optionally with ', State' or ', Country' and a ZIP code.",
        .gazetteerMissing: "The data file {0} is missing. Restore Data/ from the project, or set CLINIC_RESOURCES.",
        .geocoderSetting: "{0} is not valid ('{1}'): give an http(s) URL for the geocoder, and a timeout in seconds from 0 to 60.",
        .passwordsDiffer: "The two passwords differ.",
        .passwordTooShort: "The password is too weak: it must have at least {0} characters.",
        .passwordTooLong: "The password is too long: at most {1} characters.",
        .passwordContainsName: "The password is too weak: it must not contain your name or surname.",
        .passwordCommon: "The password is too weak: it is one of the most common passwords. A few unrelated words make a strong one.",
        .accountLocked: "Too many failed log-ins for this login: try again after {0} (in {1} min).",
        .backupExists: "{0} already exists: choose a new file for the backup.",
        .backupUnwritable: "Cannot write the backup to {0}.",
        .backupDamaged: "{0} is not a sound database: {1}. Nothing was changed.",
        .backupNotOurs: "{0} is not a clinic database backup. Nothing was changed.",
        .backupSetting: "{0} is not valid ('{1}'): hours from 0 to 8760, and a count of backups to keep from 1 to 1000.",
        .backupDone: "Backup written to {0} (migration version {1}).",
        .restoreDone: "Restored {0}. The replaced database is kept at {1}.",
        .checkOk: "The database is sound: integrity ok, no foreign key violations, the schema its migrations make, the key file matches.",
        .checkFailed: "The database has problems: {0}.",
        .autoBackupFailed: "Warning: the automatic backup failed: {0}",
        .privacyChanged: "The privacy policy has changed (version {0}) since you accepted it. Read it, and accept it to log in.",
        .promptOldPassword: "Current password: ", .passwordChanged: "Password changed; your other sessions have ended.",
        .accountDeleted: "Account {0} deleted. Your appointments stay in the clinic's records without your personal data.",
        .staffRowInvalid: "Staff account {0} has a role this version does not know.",
        .staffForbidden: "A {0} may not do this.",
        .staffDoctorRequired: "A doctor's account needs the doctor (of that clinic) it is.",
        .staffDoctorOnlyForDoctors: "Only a doctor's account names a doctor.",
        .staffNotFound: "There is no staff account {0}.",
        .staffNotLoggedIn: "Not logged in as staff.",
        .staffReasonRequired: "Cancelling for the clinic needs a reason, which the patient is told.",
        .staffReasonInvalid: "The reason must be at most 500 characters, with no control characters.",
        .staffAdded: "Staff account {0} ({1}) added for clinic {2}.",
        .staffLoggedIn: "Logged in as {0} {1}, {2} at clinic {3}.",
        .staffLoggedOut: "Logged out (staff).",
        .staffWhoami: "{0} {1} ({2}), {3} at clinic {4}.",
        .staffDayHeader: "{0} — {1} ({2})",
        .staffDayEmpty: "No appointments that day.",
        .staffDayLine: "{0}  #{1}  {2}  {3}  {4}",
        .staffActed: "Appointment {0} is now {1}.",
        .staffDisabled: "Staff account {0} disabled; its sessions ended.",
        .staffAccountLine: "{0}  {1}  {2} {3}  {4}{5}",
        .staffPatientNotFound: "There is no patient with the login {0}.",
        .staffPatientUnavailable: "This patient cannot be booked at that time: another booking of theirs, or their limit of active appointments, stands in the way. The patient can see their own bookings.",
        .visitTypeNotFound: "There is no visit type {0} offered in that department.",
        .visitTypeNameInvalid: "A visit type needs an English and a Russian name, 1 to 100 characters each, with no control characters.",
        .visitTypeDurationInvalid: "A visit lasts 5 to 480 minutes, in steps of 5 (got {0}).",
        .visitTypePriceInvalid: "A price is 0 to 1,000,000.00, in cents.",
        .visitTypeLine: "{0}  {1}  {2} min{3}",
        .visitTypesNone: "This department books single slots (no visit types).",
        .chooseVisitType: "Visit",
        .visitTypeChoice: "{0}, {1} min",
        .staffHoursConflict: "That leaves booked appointments outside the doctor's hours: {0}. Move them first, or force the change (they are cancelled for the clinic, with the reason).",
        .staffHoursChanged: "the doctor's hours changed",
        .staffHoursSet: "Hours of doctor {0} set; {1} appointments cancelled.",
        .staffHoursLine: "{0}  {1}",
        .staffDoctorLine: "{0}  {1}  department {2} ({3})",
        .staffBooked: "Booked appointment {0} for {1}: {2} with {3}.",
        .accessLogNone: "Nobody on the clinic side has read or changed your data.",
        .accessLogLine: "{0}  {1}  {2}  {3}",
        .auditExportNone: "No audit events since {0}.",
        .keyUnwritable: "Cannot write the key file {0}.",
        .keyInsecure: "The key file {0} can be read by other users. Fix it with: chmod 600 {0}",
        .keyUnreadable: "The key file {0} is damaged: it must hold one base64 line of 32 bytes.",
        .keyMissing: "The key file {0} is missing: patients' personal data cannot be read without it. Restore it from where you keep the key's copy.",
        .keyWrong: "The key file {0} holds another key than this database's: patients' personal data cannot be read with it.",
        .personalUnreadable: "The personal data of '{0}' cannot be decrypted: the key is wrong or the data was altered.",
        .backupOtherKey: "{0} was made under another personal-data key than this database's: restoring it would leave its patients unreadable. Nothing was changed.",
        .keyRotated: "Personal data of {0} re-encrypted under a new key, now in {1}. Back the key file up.",
        .auditKeyUnreadable: "The audit key file {0} is damaged: it must hold a base64 line of 32 bytes, then a line with a row number and a 64-digit hash.",
        .auditKeyMissing: "The audit key file {0} is missing: the audit trail's keyed rows can be neither verified nor extended without it (they are not known to be altered). Restore it from where you keep its copy.",
        .auditKeyWrong: "The audit key file {0} holds another key than this database's audit trail was keyed with: the trail cannot be verified or extended with it.",
        .auditKeyMismatch: "The audit trail does not end where its key file {0} took over: it was rewritten without the key, or a backup from before the key was restored. Nothing was changed; the operator's check names what is wrong.",
        .auditNotKeyed: "The audit trail's {0} rows are not keyed and there is no audit key file {1}: they were written before audit keys and no change has been audited since, or the key file was removed. A plain hash chain can be recomputed by anyone who can write the database.",
        .auditRowUnreadable: "audit row {0} cannot be read: its {1} is {2}",
        .auditRowsUnreadable: "{0} audit rows could not be read (ids {1}) and were left out; the others were exported. The file was edited: the operator's check names what is wrong.",
        .checkAuditUnverified: "Nothing wrong was found, but the audit trail could not be verified: {0}",
        .passwordContainsLogin: "The password is too weak: it must not contain the login.",
        .privacyRequired: "Registration needs your consent to the privacy policy.",
        .loginTaken: "The login '{0}' is taken.",
        .clientNotFound: "There is no patient {0}.",
        .missingOption: "Missing {0}: give it as an option, or run the command on a terminal to be asked.",
        .passwordNeeded: "Give the password on standard input with --password-stdin, or run on a terminal.",
        .passwordEmpty: "The password is empty.",
        .cannotReschedule: "An appointment that is {0f} cannot be rescheduled.",
        .cannotCancel: "An appointment that is {0f} cannot be cancelled.",
        .notesTooLong: "Notes may have at most {0} characters.",
        .notesControl: "Notes must not contain control characters.",
        .appointmentNotFound: "There is no appointment {0}.",
        .notYourAppointment: "Appointment {0} is not yours.",
        .slotInPast: "That time has passed: choose a time in the future.",
        .slotTaken: "That slot is already taken: choose another time.",
        .slotOutsideHours: "No doctor of this department has a slot starting at {0} ({1}).",
        .overlapping: "You already have an appointment at that time ({0}).",
        .overlappingUnknown: "You already have an appointment at that time.",
        .slotTooSoon: "That slot starts too soon: book at least {0} minutes ahead.",
        .slotTooFar: "That slot is too far ahead: appointments can be booked at most {0} days ahead.",
        .tooLate: "It is too late to change this appointment: changes close {0} minutes before the start. Please call the clinic.",
        .limitReached: "You already hold {0} upcoming appointments, the most allowed. Cancel one first.",
        .transitionRefused: "An appointment that is {0f} cannot become {1f}.",
        .notStartedYet: "An appointment cannot be marked {0f} before it starts.",
        .daysRange: "The number of days must be from 1 to 31 (got {0}).",
        .settingUnknown: "There is no setting '{0}'. Settings: {1}.",
        .settingRange: "{0} must be a whole number from {1} to {2}.",
        .exceptionInvalid: "An exception is a day off, or hours from and to (HH:MM, start before end) with a slot of 5 to 480 minutes.",
        .exceptionNotFound: "There is no working-hours exception {0}.",
        .noSlots: "No slots on these days.",
        .clinicTime: "Times are the clinic's: {0} ({1}).",
        .headerAvailable: "Free", .headerEvent: "Event", .headerWhen: "When", .headerActor: "By",
        .available: "free", .taken: "taken", .eventBooked: "booked", .eventRescheduled: "rescheduled",
        .settingLine: "{0} = {1}",
        .exceptionAdded: "Exception {0} added for doctor {1} on {2}.",
        .exceptionRemoved: "Exception {0} removed.",
        .dayOff: "day off",
        .statusSet: "Appointment {0} is now {1f}.",
        .findNone: "No clinic nearby has a free slot for that specialization before {0}.",
        .findVisitTooLong: "No doctor of that specialization works {0} minutes in a row; the longest visit that can fit is {1} minutes.",
        .findIncomplete: "The search stopped after {0} clinics; farther clinics were not looked at.",
        .beforeInPast: "The latest start asked for must be in the future.",
        .doctorUnknown: "There is no doctor {0}.",
        .exceptionOverlaps: "The doctor already has an exception on {0} that this one would overlap or contradict: remove it first.",
        .headerDate: "Date", .actorPatient: "patient", .actorStaff: "staff", .tooSoon: "too soon",
        .timeHasSeconds: "The time '{0}' has seconds: give the clinic's time to the minute, like 2026-11-23 09:20.",
        .importBadHeader: "The header line cannot be read (bad quoting or not UTF-8).",
        .coordinatesInvalid: "Cannot read the coordinates '{0}'. Write them like 53.9,27.56 or 53.9N 27.56E.",
        .coordinatesOutOfRange: "The coordinates '{0}' are out of range: latitude must be within ±90, longitude within ±180.",
        .addressInvalid: "The address must be 1 to 300 characters without control characters.",
        .geocodeFailed: "Cannot find '{0}': no known city matches. Try 'City, State' or 'City, Country', or give coordinates.",
        .geocoderUnavailable: "The geocoder at {0} did not answer.",
        .geocoderBadAnswer: "The geocoder's answer cannot be read.",
        .geocoderTimeout: "The geocoder at {0} did not answer within {1} s.",
        .locationChoice: "Give exactly one location: coordinates, an address, or your own address.",
        .noHomeCoordinates: "Your profile has no coordinates: give an address or coordinates.",
        .radiusInvalid: "The radius must be a number of kilometres of 0 or more (got {0}).",
        .limitBetween: "The limit must be from {1} to {2} (got {0}).",
        .apiFieldRequired: "The field '{0}' is required.",
        .apiFieldWholeNumber: "The field '{0}' must be a whole number.",
        .apiFieldBoolean: "The field '{0}' must be true or false.",
        .apiFieldChoice: "The field '{0}' must be one of: {1}.",
        .apiFieldText: "The field '{0}' must be 1 to {1} characters without control characters.",
        .apiFieldType: "The field '{0}' must be of JSON type {1}.",
        .apiBodyNotJSON: "The request body is not valid JSON.",
        .apiDuplicateKey: "The request body gives '{0}' more than once.",
        .apiBodyInvalid: "The request body is not what this request takes: {0}.",
        .apiTooLarge: "The request body is larger than {0} bytes.",
        .apiMediaType: "Send the request body as application/json.",
        .apiRateLimited: "Too many requests from this address: try again in {0} seconds.",
        .apiRouteNotFound: "There is nothing at {0}.",
        .apiMethodNotAllowed: "{0} is not allowed here.",
        .apiKeyReused: "This Idempotency-Key was used for another request: use a new key for a new request.",
        .apiKeyInvalid: "The Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is best).",
        .apiCursorInvalid: "The cursor is not one this server gave out: start again without it.",
        .apiSessionNotFound: "You have no session {0}.",
        .serveBadSetting: "{0} must be {1}.",
        .serveNeedsTLS: "Without --tls-cert and --tls-key the server listens only on a loopback address (127.0.0.1, ::1), not on {0}: give a certificate, or --insecure-http if a proxy in front encrypts.",
        .serveListening: "Listening on {0}",
        .serveInsecure: "Warning: plain HTTP on {0}: passwords and personal data cross the network unencrypted.",
        .tlsFileInvalid: "{0} is not {1}.",
        .serveFailed: "The server could not start on {0}: {1}.",
        .serveTLSPair: "Give --tls-cert and --tls-key together.",
        .apiNotLoggedIn: "Sign in first: send Authorization: Bearer with a token from POST /v1/sessions (a token ends after 30 days unused, at log-out, or when the password changes).",
        .headerDistance: "Distance",
        .nearestNone: "No clinic matches.",
        .chooseClinic: "Home clinic [1-{0}, Enter for 1]: ",
        .geocodeLine: "{0}: {1}, {2} ({3}, from {4})",
        .privacyPolicy: """
            Privacy policy (version {0})

            What we store: your login; a salted Argon2id hash of your password (never the password);
            your name, surname and address (street, house, city) and the coordinates found for it;
            your home clinic, language and the time you accepted this policy; your appointments
            and sessions (only a SHA-256 of each session token); your messages from the clinics;
            an e-mail address, only if you give one.

            Why: to identify you, to find the clinics nearest to you and to book, reschedule and
            cancel your appointments, and to tell you about them. Your name, surname, street, house,
            coordinates and e-mail address are stored encrypted. Nothing is sent anywhere, except
            your city to a geocoding service if the operator has configured one, and e-mail: once
            you confirm an address (with a code sent to it), every message in your inbox (a booking,
            a change, a cancellation with the clinic's reason, a reminder 24 and 2 hours before, a
            note from clinic staff) is also e-mailed to it through the operator's mail server, with
            the appointment's calendar file attached; the mail servers on the way keep copies.
            Your private calendar address lets anyone who has it read your appointments: rotate or
            revoke it with 'clinic profile calendar-url'. The operator's backups hold copies of the database.
            A login name typed at a failed log-in is kept for 15 minutes to stop password guessing.

            How long: as long as your account exists. Sessions end after 30 days without use.
            Cancelled and past appointments stay in the clinic's records.

            Who sees it: staff of a clinic where you have an appointment (receptionists, the
            clinic's administrators, and your doctor for their own appointments) see your name
            and login on that clinic's schedule. Every time staff read your data or change your
            appointments, who did it and when is recorded; read that record with
            'clinic profile access-log'. Staff of other clinics see nothing about you.

            Your control: see everything stored about you with 'clinic profile export' (JSON);
            correct it with 'clinic profile edit'; delete your account with 'clinic profile delete'
            (your personal data and sessions go at once; your appointments stay in the clinic's
            records without your name or notes, and your login becomes free). The interactive
            session ('clinic') offers the same under Profile.
            """,
        .headerId: "ID", .headerName: "Name", .headerCity: "City",
        .headerKind: "Kind", .headerTimeZone: "Time zone", .headerSpecialization: "Specialization",
        .headerDoctors: "Doctors", .headerClinic: "Clinic", .headerDepartment: "Department",
        .headerDoctor: "Doctor", .headerStart: "Start", .headerStatus: "Status",
        .headerHours: "Working hours",
        .kindHospital: "hospital", .kindPediatric: "pediatric", .kindClinic: "clinic",
        .noClinics: "No clinics match.", .noDepartments: "This clinic has no departments.",
        .noDoctors: "This department has no doctors.", .noAppointments: "No appointments.",
        .registered: "Registered {0} (patient {1}). Log in with: clinic login --login {0}",
        .loggedIn: "Logged in as {0}.", .loggedOut: "Logged out.", .notLoggedInInfo: "Not logged in.",
        .whoami: "{0} — {1} {2}, {3} {4}, {5}",
        .booked: "Booked appointment {0}: {1}, {2}, with {3}.",
        .rescheduled: "Appointment {0} moved to {1}, with {2}.",
        .cancelled: "Appointment {0} is cancelled.",
        .initDone: "Database ready at {0}: {1} clinics.",
        .initAlready: "Database at {0} is already set up ({1} clinics).",
        .migrated: "Database at version {0} (ran: {1}).",
        .migrateNothing: "Database already at version {0}.",
        .importDone: "Imported: {0} new, {1} updated, {2} skipped.",
        .importSkipped: "Skipped rows:",
        .importProblem: "line {0}: {1}",
        .promptField: "{0f}: ", .promptPassword: "Password: ", .promptPasswordAgain: "Password again: ",
        .promptAccept: "Do you accept the privacy policy? [y/N] ",
        .statusScheduled: "scheduled", .statusConfirmed: "confirmed", .statusCompleted: "completed",
        .statusCancelled: "cancelled", .statusNoShow: "no show", .statusArrived: "checked in", .statusInProgress: "in progress",
        .weekdays: "Mon,Tue,Wed,Thu,Fri,Sat,Sun",
        .loadingDirectory: "Setting up the clinic directory (first run)…",
        .demoNote: "Departments, doctors and hours are demo data.",
        .progressClinics: "Clinics",
        .usageNoCommand: "No command given. Run 'clinic --help' for the commands, or run clinic on a terminal for the interactive session.",
    ]

    static let coreRU: [MessageKey: String] = [
        .migrationMalformed: "Файл миграции {0} испорчен: нужна одна строка '-- migrate:up', затем одна '-- migrate:down'.",
        .migrationForeignKeys: "Переход схемы к версии {0} оставил бы строки со ссылками на несуществующие строки; ничего не изменено.",
        .migrationsMissing: "Не удаётся прочитать папку миграций {0}.",
        .migrationSequence: "Миграции нумеруются 0001, 0002, … без пропусков; ошибка на {0}.",
        .migrationChanged: "Миграция {0} изменена после того, как была применена к этой базе. Верните исходный файл; база не изменена.",
        .migrationTargetRange: "Нельзя перейти к версии {0}: версии от 0 до {1}.",
        .databaseTooNew: "В базе есть миграция {0}, новее, чем знает программа (последняя {1}). Обновите clinic; база не изменена.",
        .databaseUnavailable: "Не удаётся открыть базу {0}: {1}",
        .databaseBusy: "База занята другой командой. Повторите через минуту.",
        .storageFailure: "Ошибка базы данных: {0}. Ничего не изменено.",
        .storedValueUnreadable: "Сохранённое значение не читается: {0} в строке {1} не того типа, который записывает программа. База изменена в обход программы; восстановите резервную копию или исправьте значение. Ничего не изменено.",
        .resourcesMissing: "Не найдены папки Data/ и Migrations/. Укажите папку проекта в CLINIC_RESOURCES.",
        .internalError: "Внутренняя ошибка: {0}",
        .geocodeSuggestion: "Не удаётся найти '{0}'. Может быть, {1}? Введите '{2}'.",
        .geocodeAmbiguous: "Выбрано: {0}; есть также: {1}.",
        .geocodeAlternative: "{0} — введите '{1}'",
        .whichPlace: "Какой именно {0}?",
        .choosePlace: "Место [1-{0}, Enter — 1]: ",
        .zoneChangesNote: "Часовые пояса клиник теперь берутся из границ поясов, и у некоторых клиник пояс изменился: {0}, сделанные до изменения, теперь приходятся на другое местное время. Список — в 'clinic admin check', чтобы сотрудники предупредили пациентов.",
        .zoneChangesHeading: "Предстоящие записи, сделанные до смены часового пояса клиники ({0}): сообщите пациентам новое местное время.",
        .zoneChangeLine: "запись {0} в {1} ({2}): {3} по {4} — это {5} по {6}",
        .headerZone: "Часовой пояс",
        .databaseDamaged: "База {0} повреждена ({1}). Ничего не записано: выполните 'clinic admin check', чтобы увидеть ошибки, и восстановите исправную копию.",
        .databaseReadOnly: "База {0} доступна вам только для чтения, а эта команда изменяет её. Ничего не изменено.",
        .databaseReadOnlyOutdated: "База {0} доступна вам только для чтения, и её нужно перевести на эту версию clinic; попросите владельца выполнить 'clinic admin migrate'.",
        .databaseInsecure: "{0} доступен для чтения другим пользователям, и сделать его закрытым не удалось. Исправьте: chmod 600 {0}",
        .sessionFileLink: "Файл сеанса {0} — символическая ссылка; отказано. Удалите её и войдите снова.",
        .sessionFileInsecureEnded: "Файл сеанса {0} был доступен другим пользователям: сеанс завершён, файл удалён. Войдите снова.",
        .sessionFileUnwritable: "Не удаётся записать файл сеанса {0}.",
        .sessionFileInsecure: "Файл сеанса {0} доступен для чтения другим пользователям. Исправьте: chmod 600 {0}",
        .notLoggedIn: "Вы не вошли.",
        .invalidCredentials: "Неверный логин или пароль.",
        .invalidTime: "Не удаётся прочитать время '{0}'. Используйте ISO 8601 со смещением (2026-11-23T09:20:00+03:00 или …Z) или 'ГГГГ-ММ-ДД ЧЧ:ММ' по времени клиники.",
        .timeDoesNotExist: "Времени {0} в поясе {1} нет (в этот день часы его пропускают).",
        .invalidDay: "Не удаётся прочитать дату '{0}'. Используйте ГГГГ-ММ-ДД.",
        .importNoHeader: "Файл пуст: нужна строка заголовка с названиями столбцов.",
        .importMissingColumns: "В заголовке нет обязательных столбцов: {0}.",
        .importInvalidUTF8: "строка не в кодировке UTF-8",
        .importUnterminatedQuote: "поле в кавычках не закрыто",
        .importBadQuote: "после закрывающей кавычки стоит символ",
        .importDuplicateId: "внешний id {0} уже встречается в строке {1}",
        .importColumnCount: "полей {0}, а в заголовке {1}",
        .importControlCharacter: "поле «{0f}» содержит управляющий символ",
        .importEmptyId: "внешний id пуст или длиннее 64 символов",
        .importEmptyName: "пустое название",
        .importFieldTooLong: "поле «{0f}» слишком длинное",
        .importBadCoordinates: "координаты '{0}', '{1}' — не числа в пределах ±90 и ±180",
        .importBadFlag: "поле «{0f}» должно быть 0/1, true/false или yes/no, а не '{1}'",
        .importBadTimeZone: "'{0}' — не часовой пояс IANA",
        .importRejected: "В файле плохих строк: {0}; ничего не импортировано. Исправьте их или импортируйте верные строки с --skip-invalid.",
        .clinicExists: "Клиника с внешним id {0} уже есть.",
        .limitRange: "Лимит должен быть не меньше 1 (получено {0}).",
        .clinicNotFound: "Клиники {0} нет.",
        .specializationInvalid: "Специализация — от 1 до 100 символов.",
        .specializationUnknown: "Ни в одной клинике нет отделения «{0}». Возможно, вы имели в виду: {1s}?",
        .departmentExists: "В клинике уже есть отделение «{0}».",
        .doctorNameInvalid: "Имя врача — от 1 до 200 символов, без управляющих символов.",
        .workingHoursInvalid: "Часы работы: день недели 1–7, начало раньше конца в пределах суток, приём от 5 до 480 минут, без пересечений с другими часами того же дня недели.",
        .departmentNotFound: "Отделения {0} нет.",
        .doctorNotFound: "В этом отделении нет врача {0}.",
        .invalidId: "'{0}' — неверный id: нужно целое положительное число.",
        .fileUnreadable: "Не удаётся прочитать файл {0}.",
        .loginInvalid: "Логин — от 3 до 64 букв, цифр или символов . _ - @.",
        .fieldEmpty: "Поле «{0f}» не может быть пустым.",
        .fieldLettersOnly: "Поле «{0f}» может содержать только буквы, пробелы, дефисы и апострофы (не более 100).",
        .streetInvalid: "Улица — от 1 до 100 символов, хотя бы одна буква.",
        .houseInvalid: "Номер дома должен начинаться с цифры: 12, 12А или 12/3.",
        .cityUnknown: "Город '{0}' неизвестен (его нет ни в справочнике мест, ни в справочнике клиник). Проверьте написание или добавьте штат или страну: 'Portland, ME'.",
        .cityInvalid: "Город — от 1 до 100 букв, пробелов, дефисов, апострофов или точек, можно с ', Штат' или ', Страна' и почтовым индексом США.",
        .gazetteerMissing: "Нет файла данных {0}. Восстановите Data/ из проекта или задайте CLINIC_RESOURCES.",
        .geocoderSetting: "{0} задан неверно ('{1}'): нужен http(s)-адрес геокодера и время ожидания от 0 до 60 секунд.",
        .passwordsDiffer: "Пароли не совпадают.",
        .passwordTooShort: "Слишком слабый пароль: нужно не меньше {0} символов.",
        .passwordTooLong: "Слишком длинный пароль: не больше {1} символов.",
        .passwordContainsName: "Слишком слабый пароль: он не должен содержать ваше имя или фамилию.",
        .passwordCommon: "Слишком слабый пароль: он из числа самых распространённых. Несколько не связанных слов — хороший пароль.",
        .accountLocked: "Слишком много неудачных входов под этим логином: попробуйте после {0} (через {1} мин).",
        .backupExists: "{0} уже существует: выберите для копии новый файл.",
        .backupUnwritable: "Не удаётся записать копию в {0}.",
        .backupDamaged: "{0} — повреждённая база: {1}. Ничего не изменено.",
        .backupNotOurs: "{0} — не резервная копия базы clinic. Ничего не изменено.",
        .backupSetting: "{0} задан неверно ('{1}'): часы от 0 до 8760, число хранимых копий от 1 до 1000.",
        .backupDone: "Резервная копия записана в {0} (версия миграций {1}).",
        .restoreDone: "Восстановлено из {0}. Заменённая база сохранена в {1}.",
        .checkOk: "База в порядке: целостность ok, нарушений внешних ключей нет, схема соответствует миграциям, файл ключа подходит.",
        .checkFailed: "В базе есть ошибки: {0}.",
        .autoBackupFailed: "Внимание: автоматическая резервная копия не удалась: {0}",
        .privacyChanged: "Политика конфиденциальности изменилась (версия {0}) с тех пор, как вы её приняли. Прочитайте её и примите, чтобы войти.",
        .promptOldPassword: "Текущий пароль: ", .passwordChanged: "Пароль изменён; другие ваши сеансы завершены.",
        .accountDeleted: "Учётная запись {0} удалена. Записи на приём остаются в архиве клиники без ваших личных данных.",
        .staffRowInvalid: "У учётной записи сотрудника {0} роль, неизвестная этой версии.",
        .staffForbidden: "Роли «{0}» это не разрешено.",
        .staffDoctorRequired: "Учётной записи врача нужно указать, какой это врач (этой клиники).",
        .staffDoctorOnlyForDoctors: "Врача указывает только учётная запись врача.",
        .staffNotFound: "Учётной записи сотрудника {0} нет.",
        .staffNotLoggedIn: "Вход сотрудника не выполнен.",
        .staffReasonRequired: "Для отмены клиникой нужна причина: её сообщат пациенту.",
        .staffReasonInvalid: "Причина — не длиннее 500 символов и без управляющих символов.",
        .staffAdded: "Учётная запись сотрудника {0} ({1}) добавлена в клинику {2}.",
        .staffLoggedIn: "Вы вошли как {0} {1}, {2} в клинике {3}.",
        .staffLoggedOut: "Выход сотрудника выполнен.",
        .staffWhoami: "{0} {1} ({2}), {3} в клинике {4}.",
        .staffDayHeader: "{0} — {1} ({2})",
        .staffDayEmpty: "В этот день записей нет.",
        .staffDayLine: "{0}  №{1}  {2}  {3}  {4}",
        .staffActed: "Запись {0} теперь в статусе {1}.",
        .staffDisabled: "Учётная запись сотрудника {0} отключена, её сеансы завершены.",
        .staffAccountLine: "{0}  {1}  {2} {3}  {4}{5}",
        .staffPatientNotFound: "Пациента с логином {0} нет.",
        .staffPatientUnavailable: "Этого пациента нельзя записать на это время: мешает другая его запись или предел активных записей. Пациент видит свои записи сам.",
        .visitTypeNotFound: "Вида приёма {0} в этом отделении нет.",
        .visitTypeNameInvalid: "У вида приёма должны быть английское и русское названия, от 1 до 100 символов, без управляющих символов.",
        .visitTypeDurationInvalid: "Приём длится от 5 до 480 минут, кратно 5 (получено {0}).",
        .visitTypePriceInvalid: "Цена — от 0 до 1 000 000,00, в центах.",
        .visitTypeLine: "{0}  {1}  {2} мин{3}",
        .visitTypesNone: "В этом отделении запись на одиночные слоты (видов приёма нет).",
        .chooseVisitType: "Вид приёма",
        .visitTypeChoice: "{0}, {1} мин",
        .staffHoursConflict: "Тогда записи окажутся вне часов работы врача: {0}. Сначала перенесите их или примените изменение принудительно (их отменит клиника, с причиной).",
        .staffHoursChanged: "изменились часы работы врача",
        .staffHoursSet: "Часы работы врача {0} заданы; отменено записей: {1}.",
        .staffHoursLine: "{0}  {1}",
        .staffDoctorLine: "{0}  {1}  отделение {2} ({3})",
        .staffBooked: "Запись {0} для {1}: {2}, врач {3}.",
        .accessLogNone: "Со стороны клиники ваши данные никто не читал и не менял.",
        .accessLogLine: "{0}  {1}  {2}  {3}",
        .auditExportNone: "С {0} событий аудита нет.",
        .keyUnwritable: "Не удаётся записать файл ключа {0}.",
        .keyInsecure: "Файл ключа {0} доступен для чтения другим пользователям. Исправьте: chmod 600 {0}",
        .keyUnreadable: "Файл ключа {0} повреждён: в нём должна быть одна строка base64 из 32 байт.",
        .keyMissing: "Нет файла ключа {0}: без него личные данные пациентов не прочитать. Восстановите его из копии ключа.",
        .keyWrong: "В файле ключа {0} другой ключ, не от этой базы: личные данные пациентов им не прочитать.",
        .personalUnreadable: "Личные данные '{0}' не расшифровываются: ключ неверен или данные изменены.",
        .backupOtherKey: "{0} сделана под другим ключом личных данных: после восстановления пациентов не прочитать. Ничего не изменено.",
        .keyRotated: "Личные данные перешифрованы новым ключом (пациенты: {0}), он в {1}. Сделайте копию файла ключа.",
        .auditKeyUnreadable: "Файл ключа аудита {0} повреждён: в нём должна быть строка base64 из 32 байт, затем строка с номером записи и хешем из 64 цифр.",
        .auditKeyMissing: "Нет файла ключа аудита {0}: без него записи журнала аудита под ключом не проверить и не продолжить (что они изменены, не известно). Восстановите его из копии.",
        .auditKeyWrong: "В файле ключа аудита {0} другой ключ, не тот, которым подписан журнал аудита этой базы: журнал им не проверить и не продолжить.",
        .auditKeyMismatch: "Журнал аудита кончается не там, где его подхватил файл ключа {0}: журнал переписан без ключа или восстановлена копия, сделанная до ключа. Ничего не изменено; проверка оператора покажет, что не так.",
        .auditNotKeyed: "Записи журнала аудита ({0}) не подписаны ключом, и файла ключа аудита {1} нет: они сделаны до ключей аудита и с тех пор ничего не записывалось, либо файл ключа удалён. Простую цепочку хешей может пересчитать любой, кто может писать в базу.",
        .auditRowUnreadable: "запись аудита {0} не читается: в поле {1} значение {2}",
        .auditRowsUnreadable: "Записи аудита не читаются ({0}, id {1}) и пропущены; остальные выгружены. Файл правили: проверка оператора покажет, что не так.",
        .checkAuditUnverified: "Ошибок не найдено, но журнал аудита проверить не удалось: {0}",
        .passwordContainsLogin: "Слишком слабый пароль: он не должен содержать логин.",
        .privacyRequired: "Для регистрации нужно согласие с политикой конфиденциальности.",
        .loginTaken: "Логин '{0}' занят.",
        .clientNotFound: "Пациента {0} нет.",
        .missingOption: "Не указано: {0}. Передайте параметр или запустите команду в терминале, чтобы ввести его.",
        .passwordNeeded: "Передайте пароль на стандартный ввод с --password-stdin или запустите в терминале.",
        .passwordEmpty: "Пароль пуст.",
        .cannotReschedule: "Запись в состоянии «{0f}» нельзя перенести.",
        .cannotCancel: "Запись в состоянии «{0f}» нельзя отменить.",
        .notesTooLong: "Примечание — не больше {0} символов.",
        .notesControl: "Примечание не должно содержать управляющих символов.",
        .appointmentNotFound: "Записи {0} нет.",
        .notYourAppointment: "Запись {0} не ваша.",
        .slotInPast: "Это время прошло: выберите время в будущем.",
        .slotTaken: "Это время уже занято: выберите другое.",
        .slotOutsideHours: "Ни у одного врача отделения нет приёма, начинающегося в {0} ({1}).",
        .overlapping: "У вас уже есть запись на это время ({0}).",
        .overlappingUnknown: "У вас уже есть запись на это время.",
        .slotTooSoon: "Этот приём начинается слишком скоро: записывайтесь не позже чем за {0} минут.",
        .slotTooFar: "Этот приём слишком далеко: записаться можно не больше чем на {0} дней вперёд.",
        .tooLate: "Изменить запись уже нельзя: изменения закрываются за {0} минут до начала. Позвоните в клинику.",
        .limitReached: "У вас уже предстоящих записей: {0}, больше нельзя. Сначала отмените одну.",
        .transitionRefused: "Запись в состоянии «{0f}» нельзя перевести в «{1f}».",
        .notStartedYet: "Нельзя отметить запись как «{0f}» до её начала.",
        .daysRange: "Число дней — от 1 до 31 (получено {0}).",
        .settingUnknown: "Настройки '{0}' нет. Настройки: {1}.",
        .settingRange: "{0} — целое число от {1} до {2}.",
        .exceptionInvalid: "Исключение — выходной или часы с и по (ЧЧ:ММ, начало раньше конца) с приёмом от 5 до 480 минут.",
        .exceptionNotFound: "Исключения в часах работы {0} нет.",
        .noSlots: "В эти дни приёма нет.",
        .clinicTime: "Время клиники: {0} ({1}).",
        .headerAvailable: "Свободно", .headerEvent: "Событие", .headerWhen: "Когда", .headerActor: "Кто",
        .available: "свободно", .taken: "занято", .eventBooked: "запись", .eventRescheduled: "перенос",
        .settingLine: "{0} = {1}",
        .exceptionAdded: "Исключение {0} добавлено: врач {1}, {2}.",
        .exceptionRemoved: "Исключение {0} удалено.",
        .dayOff: "выходной",
        .statusSet: "Запись {0} теперь «{1f}».",
        .findNone: "Рядом нет клиник со свободным временем по этой специальности до {0}.",
        .findVisitTooLong: "Ни один врач этой специальности не работает {0} минут подряд; самый длинный возможный приём — {1} минут.",
        .findIncomplete: "Поиск остановлен после {0} клиник; более далёкие клиники не просмотрены.",
        .beforeInPast: "Крайнее время начала должно быть в будущем.",
        .doctorUnknown: "Врача {0} нет.",
        .exceptionOverlaps: "У врача уже есть исключение на {0}, с которым это пересекается или спорит: сначала удалите его.",
        .headerDate: "Дата", .actorPatient: "пациент", .actorStaff: "клиника", .tooSoon: "поздно",
        .timeHasSeconds: "Во времени '{0}' есть секунды: укажите время клиники с точностью до минуты, например 2026-11-23 09:20.",
        .importBadHeader: "Не удаётся прочитать строку заголовка (кавычки или не UTF-8).",
        .coordinatesInvalid: "Не удаётся прочитать координаты '{0}'. Пишите так: 53.9,27.56 или 53.9N 27.56E.",
        .coordinatesOutOfRange: "Координаты '{0}' вне допустимых пределов: широта ±90, долгота ±180.",
        .addressInvalid: "Адрес — от 1 до 300 символов без управляющих символов.",
        .geocodeFailed: "Не удаётся найти '{0}': ни один известный город не подходит. Попробуйте 'Город, Страна' или укажите координаты.",
        .geocoderUnavailable: "Геокодер {0} не ответил.",
        .geocoderBadAnswer: "Не удаётся прочитать ответ геокодера.",
        .geocoderTimeout: "Геокодер {0} не ответил за {1} с.",
        .locationChoice: "Укажите ровно одно место: координаты, адрес или ваш собственный адрес.",
        .noHomeCoordinates: "В вашем профиле нет координат: укажите адрес или координаты.",
        .radiusInvalid: "Радиус — число километров, 0 или больше (получено {0}).",
        .limitBetween: "Лимит — от {1} до {2} (получено {0}).",
        .apiFieldRequired: "Поле «{0}» обязательно.",
        .apiFieldWholeNumber: "Поле «{0}» должно быть целым числом.",
        .apiFieldBoolean: "Поле «{0}» должно быть true или false.",
        .apiFieldChoice: "Поле «{0}» должно быть одним из: {1}.",
        .apiFieldText: "Поле «{0}» — от 1 до {1} символов без управляющих.",
        .apiFieldType: "Поле «{0}» должно иметь JSON-тип {1}.",
        .apiBodyNotJSON: "Тело запроса — не правильный JSON.",
        .apiDuplicateKey: "В теле запроса «{0}» указано больше одного раза.",
        .apiBodyInvalid: "Тело запроса не подходит к этому запросу: {0}.",
        .apiTooLarge: "Тело запроса больше {0} байт.",
        .apiMediaType: "Пришлите тело запроса как application/json.",
        .apiRateLimited: "Слишком много запросов с этого адреса: попробуйте через {0} с.",
        .apiRouteNotFound: "По адресу {0} ничего нет.",
        .apiMethodNotAllowed: "Метод {0} здесь не разрешён.",
        .apiKeyReused: "Этот Idempotency-Key уже использован для другого запроса: для нового запроса нужен новый ключ.",
        .apiKeyInvalid: "Idempotency-Key — от 1 до 255 видимых символов ASCII (лучше всего UUID).",
        .apiCursorInvalid: "Этот курсор выдан не этим сервером: начните без него.",
        .apiSessionNotFound: "У вас нет сеанса {0}.",
        .serveBadSetting: "{0}: нужно {1}.",
        .serveNeedsTLS: "Без --tls-cert и --tls-key сервер слушает только локальный адрес (127.0.0.1, ::1), а не {0}: укажите сертификат или --insecure-http, если шифрует прокси перед сервером.",
        .serveListening: "Слушаю {0}",
        .serveInsecure: "Внимание: обычный HTTP на {0}: пароли и личные данные идут по сети без шифрования.",
        .tlsFileInvalid: "{0} — не {1}.",
        .serveFailed: "Сервер не запустился на {0}: {1}.",
        .serveTLSPair: "Укажите --tls-cert и --tls-key вместе.",
        .apiNotLoggedIn: "Сначала войдите: пришлите Authorization: Bearer с токеном из POST /v1/sessions (токен кончается после 30 дней без использования, при выходе или смене пароля).",
        .headerDistance: "Расстояние",
        .nearestNone: "Подходящих клиник нет.",
        .chooseClinic: "Ваша клиника [1-{0}, Enter — 1]: ",
        .geocodeLine: "{0}: {1}, {2} ({3}, источник: {4})",
        .privacyPolicy: """
            Политика конфиденциальности (версия {0})

            Что мы храним: ваш логин; хеш пароля Argon2id с солью (но не сам пароль); имя, фамилию
            и адрес (улица, дом, город) и найденные для него координаты; вашу клинику, язык и время
            согласия с этой политикой; ваши записи и сеансы (только SHA-256 каждого токена);
            сообщения от клиник; адрес электронной почты — только если вы его укажете.

            Зачем: чтобы узнавать вас, находить ближайшие клиники, записывать вас на приём,
            переносить и отменять записи и сообщать вам о них. Имя, фамилия, улица, дом, координаты
            и адрес почты хранятся зашифрованными. Данные никуда не передаются, кроме названия
            города — службе геокодирования, если оператор её подключил, и писем: когда вы подтвердите
            адрес (кодом, присланным на него), каждое сообщение во входящих (запись, перенос, отмена
            с причиной от клиники, напоминание за 24 и за 2 часа, сообщение от сотрудников клиники)
            отправляется и на него через почтовый сервер оператора, с файлом календаря записи;
            почтовые серверы по пути хранят копии. Ваш личный адрес календаря позволяет любому, у
            кого он есть, видеть ваши записи: замените или отключите его — 'clinic profile calendar-url'.
            Резервные копии оператора содержат копии базы.
            Логин, введённый при неудачном входе, хранится 15 минут, чтобы мешать подбору пароля.

            Как долго: пока существует ваша учётная запись. Сеанс завершается после 30 дней без
            использования. Отменённые и прошедшие записи остаются в архиве клиники.

            Кто это видит: сотрудники клиники, где у вас есть запись (регистраторы, администраторы
            клиники и ваш врач — по своим приёмам), видят ваше имя и логин в расписании этой
            клиники. Каждый раз, когда сотрудник читает ваши данные или меняет ваши записи,
            записывается, кто и когда это сделал; этот журнал — 'clinic profile access-log'.
            Сотрудники других клиник о вас ничего не видят.

            Ваш контроль: всё, что о вас хранится, — 'clinic profile export' (JSON); исправить —
            'clinic profile edit'; удалить учётную запись — 'clinic profile delete' (личные данные
            и сеансы удаляются сразу; записи на приём остаются в архиве клиники без вашего имени
            и заметок, логин освобождается). В диалоговом режиме ('clinic') то же — в разделе «Профиль».
            """,
        .headerId: "ID", .headerName: "Название", .headerCity: "Город",
        .headerKind: "Тип", .headerTimeZone: "Часовой пояс", .headerSpecialization: "Специализация",
        .headerDoctors: "Врачей", .headerClinic: "Клиника", .headerDepartment: "Отделение",
        .headerDoctor: "Врач", .headerStart: "Начало", .headerStatus: "Состояние",
        .headerHours: "Часы работы",
        .kindHospital: "больница", .kindPediatric: "детская", .kindClinic: "клиника",
        .noClinics: "Подходящих клиник нет.", .noDepartments: "В клинике нет отделений.",
        .noDoctors: "В отделении нет врачей.", .noAppointments: "Записей нет.",
        .registered: "Зарегистрирован {0} (пациент {1}). Войдите: clinic login --login {0}",
        .loggedIn: "Вы вошли как {0}.", .loggedOut: "Вы вышли.", .notLoggedInInfo: "Вход не выполнен.",
        .whoami: "{0} — {1} {2}, {3} {4}, {5}",
        .booked: "Запись {0}: {1}, {2}, врач {3}.",
        .rescheduled: "Запись {0} перенесена на {1}, врач {2}.",
        .cancelled: "Запись {0} отменена.",
        .initDone: "База готова: {0}; клиник: {1}.",
        .initAlready: "База {0} уже настроена (клиник: {1}).",
        .migrated: "Версия базы {0} (выполнено: {1}).",
        .migrateNothing: "База уже на версии {0}.",
        .importDone: "Импорт: новых {0}, обновлено {1}, пропущено {2}.",
        .importSkipped: "Пропущенные строки:",
        .importProblem: "строка {0}: {1}",
        .promptField: "{0f}: ", .promptPassword: "Пароль: ", .promptPasswordAgain: "Пароль ещё раз: ",
        .promptAccept: "Вы принимаете политику конфиденциальности? [д/Н] ",
        .statusScheduled: "запланирована", .statusConfirmed: "подтверждена", .statusCompleted: "состоялась",
        .statusCancelled: "отменена", .statusNoShow: "неявка", .statusArrived: "пациент пришёл", .statusInProgress: "идёт приём",
        .weekdays: "Пн,Вт,Ср,Чт,Пт,Сб,Вс",
        .loadingDirectory: "Подготовка справочника клиник (первый запуск)…",
        .demoNote: "Отделения, врачи и часы работы — демонстрационные данные.",
        .progressClinics: "Клиники",
        .usageNoCommand: "Команда не указана. Список команд: 'clinic --help'; для диалогового режима запустите clinic в терминале.",
    ]
}
