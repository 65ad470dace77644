import ClinicKit

/// Every text that only the command line says, by key: its tables and headers, what a command did,
/// its prompts and the interactive session. The domain's messages (refusals, e-mail, statuses) stay
/// ClinicKit's `MessageKey`; these are rendered by the same template renderer (`Strings.render`), so
/// `{0}`, `{0f}` and `{0s}` mean the same here. English and Russian stand side by side in the tables
/// (Words/*.swift), one pair a key.
enum TerminalKey: String, Sendable, CaseIterable {
    // CommandWords.swift
    case geocodeAmbiguous, geocodeAlternative, choosePlace, sessionFileInsecureEnded, invalidId, promptOldPassword
    case missingOption, passwordNeeded, passwordEmpty, headerDistance, nearestNone, chooseClinic, geocodeLine
    case headerId, headerName, headerCity, headerKind, headerTimeZone, headerSpecialization, headerDoctors
    case headerClinic, headerDepartment, headerDoctor, headerStart, headerStatus, headerHours, kindHospital
    case kindPediatric, kindClinic, noClinics, noDepartments, noDoctors, noAppointments, registered, loggedIn
    case loggedOut, notLoggedInInfo, whoami, promptField, promptPassword, promptPasswordAgain, promptAccept, weekdays, hoursAnd, minutesUnit
    case usageNoCommand
    // AdminWords.swift
    case zoneChangesNote, zoneChangesHeading, zoneChangeLine, backupDone, restoreDone, checkOk, checkFailed
    case autoBackupFailed, accessLogNone, accessLogLine, auditExportNone, keyRotated, checkAuditUnverified
    case serveListening, serveInsecure, serveFailed, serveTLSPair, initDone, initAlready, migrated, migrateNothing
    case importDone, importSkipped, importProblem, loadingDirectory, demoNote, progressClinics
    case checkPostgresOk, copyDone, copyTableLine, copyKeyCarried, checkPostgresAuditOk
    // ScheduleWords.swift
    case visitTypeLine, visitTypesNone, chooseVisitType, visitTypeChoice, noSlots, clinicTime, headerAvailable
    case headerEvent, headerWhen, headerActor, available, taken, settingLine, exceptionAdded, exceptionRemoved, dayOff
    case statusSet, findNone, headerDate, actorPatient, actorStaff, tooSoon
    case waitlistNone, waitlistLine, waitlistJoined, waitlistLeft, waitlistOffersNone, waitlistDeclined, waitlistHeldUntil
    case waitlistEarlierThan, waitlistWorked, staffWaitlistNone, staffWaitlistLine
    // StaffWords.swift
    case reportTitle, reportName, reportBooked, reportCompleted, reportNoShows, reportCancelled, reportLate, reportByClinic
    case reportRefilled, reportTotal
    case staffAdded, staffLoggedIn, staffLoggedOut, staffWhoami, staffDayHeader, staffDayEmpty, staffDayLine
    case staffActed, staffRescheduled, staffCalendarDoctor, staffCalendarFree, staffPatientsNone, staffPatientLine, staffWalkInRegistered, staffClaimCode, claimed, staffActionsNone, staffActionsLine, staffDisabled, staffAccountLine, staffHoursSet, staffHoursLine, staffDoctorLine, staffBooked
    // MessageWords.swift
    case emailCodeSent, emailConfirmed, emailRemoved, emailNone, emailLine, emailPendingLine, messagesNone
    case messageLine, messageUnreadMark, messagesUnread, calendarURL, staffMessageSent, deliverDone, deliverNoSMTP
    case menuMessages, menuMessagesUnread
    case phoneAbsent, phoneOn, phoneOff, phoneLine, phonePendingLine, phoneTextsLine, phoneStopped, phoneCodeSent, phoneConfirmed
    case phoneRemoved, deliverTexts
    case attachmentAdded, attachmentsNone, attachmentLine, attachmentFromClinic, attachmentSaved, attachmentRemoved, attachmentsPurged
    case threadNone, threadLine, threadWritten, threadAnswered, threadClosed, threadsNone, threadsLine
    // SessionWords.swift
    case sessionNoJSON, sessionTitle, sessionHint, sessionBye, sessionEnded, startTitle, mainTitle, menuLogIn
    case menuRegister, menuLanguage, menuQuit, menuBack, menuNearest, menuClinicInfo, menuFind, menuBook
    case menuAppointments, menuReschedule, menuCancel, menuProfile, menuLogOut, menuPassword, menuDeleteAccount
    case labelLogin, labelPassword, labelPasswordAgain, labelOldPassword, labelName, labelSurname, labelStreet
    case labelHouse, labelCity, labelCityHint, labelAddress, labelCoordinates, labelClinicId, labelHomeClinic
    case historyFolderUnsafe
    case labelLanguage, answerTooLong, answerUnreadable, answerEmpty, answerYesNo, answerDefaultYes, answerDefaultNo
    case pickOne, pickNumber, pickInvalid, registerTitle, registeredSession, privacyDeclined, askAcceptPrivacy
    case chooseHomeClinic, originTitle, originMine, originAddress, originCoordinates, foundPlace, nearestTitle
    case detailsHint, whichClinic, clinicHome, clinicNearMe, clinicById, clinicPhone, clinicLocalTime, clinicDistance
    case askBookHere, chooseDepartment, chooseSpecialization, searching, foundSlotsTitle, findNoneSession, noFreeSlots
    case chooseDay, clinicZoneNote, chooseTime, askBook, notBooked, upcomingTitle, pastTitle, rescheduleTitle
    case cancelTitle, askReschedule, askCancel, notChanged, profileTitle, profileWhat, headerField, headerValue
    case editField, editHomeClinic, profileSaved, deleteWarning, askDelete, chooseDoctor, anyDoctor, labelReason, openVisitHint
    case visitActions, actionReschedule, actionCancel
}

enum TerminalWords {
    /// The tables, one an area (a key in more than one is a mistake the tests catch).
    static let areas: [[TerminalKey: (en: String, ru: String)]] = [commands, admin, schedule, staff, messages, session]

    static let en: [TerminalKey: String] = merged(\.en)
    static let ru: [TerminalKey: String] = merged(\.ru)

    static func merged(_ language: KeyPath<(en: String, ru: String), String>) -> [TerminalKey: String] {
        areas.reduce(into: [:]) { result, area in
            for (key, pair) in area where result[key] == nil { result[key] = pair[keyPath: language] }
        }
    }

    static func text(_ key: TerminalKey, _ language: Language, _ arguments: [String] = []) -> String {
        let template = (language == .ru ? ru : en)[key] ?? en[key] ?? key.rawValue
        return Strings.render(template, language, arguments)
    }
}

extension Strings {
    /// The command line's own words, rendered as ClinicKit's are (so call sites name either kind of key).
    static func text(_ key: TerminalKey, _ language: Language, _ arguments: [String] = []) -> String {
        TerminalWords.text(key, language, arguments)
    }
}
