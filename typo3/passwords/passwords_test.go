package passwords

import (
	"strings"
	"testing"

	"runsdesk/typo3/phptest"
)

// katPassword is the password of the known-answer hashes: non-ASCII, quotes, a backslash and
// a "$2y$" that must not confuse a parser.
const katPassword = `Grüße aus der Redaktion: $2y$ "quoted" \back`

// knownAnswers were produced once by PHP 8.2 with phpHashes (TYPO3's default costs).
var knownAnswers = map[string]string{
	"argon2i":  `$argon2i$v=19$m=65536,t=16,p=1$MG1aVlJXRzhFRUZyN2c0Wg$B+J4/7Ich9e2fwLIHYALiCGgBvvoRaaVdypmyjZGJ84`,
	"argon2id": `$argon2id$v=19$m=65536,t=16,p=1$UWJyNHFUbjRFVXEuSDBkMg$tVqoeQTGpgdlgx1HYFQttLkoJUorFJuj50SzFIf4ZN0`,
	"bcrypt":   `$2y$12$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UYS`,
	"pbkdf2":   `$pbkdf2-sha256$25000$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY`,
}

// phpHashes is a PHP program that reads a password on stdin and prints "<name> <hash>" lines,
// each hash built as TYPO3's password hash classes build it at their default costs: argon2i
// and argon2id (AbstractArgon2PasswordHash), bcrypt of base64(SHA-384) (BcryptPasswordHash),
// and PBKDF2-SHA256 in passlib's base64 (Pbkdf2PasswordHash).
const phpHashes = `
$pw = stream_get_contents(STDIN);
$typo3Base64 = fn(string $s): string => rtrim(str_replace('+', '.', base64_encode($s)), " =\r\n\t\0\x0B");
$salt = random_bytes(16);
$count = 25000;
$key = hash_pbkdf2('sha256', $pw, $salt, $count, 0, true);
echo "argon2i ", password_hash($pw, PASSWORD_ARGON2I, ['memory_cost' => 65536, 'time_cost' => 16]), "\n";
echo "argon2id ", password_hash($pw, PASSWORD_ARGON2ID, ['memory_cost' => 65536, 'time_cost' => 16]), "\n";
echo "bcrypt ", password_hash(base64_encode(hash('sha384', $pw, true)), PASSWORD_BCRYPT, ['cost' => 12]), "\n";
echo "pbkdf2 ", '$pbkdf2-sha256$' . sprintf('%02u', $count) . '$' . $typo3Base64($salt) . '$' . $typo3Base64($key), "\n";
`

// checkHash asserts that Verify accepts password for hash and refuses it with one more
// character (one wrong password only: each verification at TYPO3's costs takes a second
// under -race).
func checkHash(t *testing.T, name, hash, password string) {
	t.Helper()
	if ok, err := Verify(hash, password); err != nil || !ok {
		t.Errorf("%s: Verify(right password) = %v, %v; want true, nil", name, ok, err)
	}
	if ok, err := Verify(hash, password+"x"); err != nil || ok {
		t.Errorf("%s: Verify(wrong password) = %v, %v; want false, nil", name, ok, err)
	}
}

func TestVerifyKnownAnswers(t *testing.T) {
	for name, hash := range knownAnswers {
		checkHash(t, name, hash, katPassword)
	}
}

func TestVerifyHashesPHPWrites(t *testing.T) {
	for _, password := range []string{
		strings.Repeat("longer than bcrypt's 72 bytes, which TYPO3's SHA-384 step makes harmless; ", 2),
		"nul\x00inside, ünïcødé",
	} {
		out := phptest.Run(t, phpHashes, password)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(knownAnswers) {
			t.Fatalf("php printed %d lines, want %d: %q", len(lines), len(knownAnswers), out)
		}
		for _, line := range lines {
			name, hash, _ := strings.Cut(line, " ")
			checkHash(t, "php "+name, hash, password)
		}
	}
}

// malformedHashes are hashes Verify must refuse with an error: unknown formats (TYPO3's legacy
// md5 and phpass ones among them) and broken or hostile variants of the known ones.
var malformedHashes = []string{
	"",
	"plain text",
	"5f4dcc3b5aa765d61d8327deb882cf99",
	"$1$saltsalt$2vLvX4ITEEQI5LEUvJYpL1",
	"$P$C3NnHmKZI4wtN8Y8bGcXcvxs0nBN3I/",
	"$argon2d$v=19$m=65536,t=16,p=1$MG1aVlJXRzhFRUZyN2c0Wg$B+J4/7Ich9e2fwLIHYALiCGgBvvoRaaVdypmyjZGJ84",
	"$argon2i$v=16$m=65536,t=16,p=1$MG1aVlJXRzhFRUZyN2c0Wg$B+J4/7Ich9e2fwLIHYALiCGgBvvoRaaVdypmyjZGJ84",
	"$argon2i$v=19$m=65536,t=65,p=1$MG1aVlJXRzhFRUZyN2c0Wg$B+J4/7Ich9e2fwLIHYALiCGgBvvoRaaVdypmyjZGJ84",
	"$argon2id$v=19$m=99999999,t=16,p=1$UWJyNHFUbjRFVXEuSDBkMg$tVqoeQTGpgdlgx1HYFQttLkoJUorFJuj50SzFIf4ZN0",
	"$argon2id$v=19$m=65536,t=16,p=0$UWJyNHFUbjRFVXEuSDBkMg$tVqoeQTGpgdlgx1HYFQttLkoJUorFJuj50SzFIf4ZN0",
	"$argon2id$v=19$m=65536,t=99999999999999999999,p=1$UWJyNHFUbjRFVXEuSDBkMg$tVqoeQTGpgdlgx1HYFQttLkoJUorFJuj50SzFIf4ZN0",
	"$argon2id$v=19$m=65536,t=16,p=1$UWJyNHFUbjRFVXEuSDBkMg$!!",
	"$2a$12$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UYS",
	"$2y$04$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UYS",
	"$2y$31$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UYS",
	"$2y$12$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UY",
	"$2y$12$pp7vmPHD/KwYovPHKHrks.Ubq7h/Caj8RrrFxJ3sA.D8pFvUz4UYSS",
	"$2y$12$pp7vmPHD",
	"$pbkdf2-sha256$999$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$10000001$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$+25000$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$25000$wFBpLaEO4n+Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$25000$wFBpLaEO4n.Y60eB/blLVQ==$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$25000$wFBpLaEO4n.Y60eB/blLV$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
	"$pbkdf2-sha256$25000$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRj",
	"$pbkdf2-sha256$25000$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY$",
	"$pbkdf2-sha512$25000$wFBpLaEO4n.Y60eB/blLVQ$mMGHoXHEr/82CsqK30ftHPmLx..ILKOuMiajSA3HRjY",
}

func TestVerifyRefusesMalformedHashes(t *testing.T) {
	for _, hash := range malformedHashes {
		ok, err := Verify(hash, katPassword)
		if err == nil || ok {
			t.Errorf("Verify(%q) = %v, %v; want false and an error", hash, ok, err)
			continue
		}
		checkQuotesNothing(t, err.Error())
	}
}

// checkQuotesNothing fails when an error message holds anything but the fixed words Verify's
// errors are made of, so it cannot carry a piece of a hash or a password.
func checkQuotesNothing(t *testing.T, msg string) {
	t.Helper()
	if strings.Trim(msg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :,-") != "" {
		t.Errorf("error %q holds more than fixed words", msg)
	}
}

func FuzzVerify(f *testing.F) {
	for _, hash := range knownAnswers {
		f.Add(hash, katPassword)
	}
	for _, hash := range malformedHashes {
		f.Add(hash, "")
	}
	f.Fuzz(func(t *testing.T, hash, password string) {
		ok, err := Verify(hash, password)
		if err != nil {
			if ok {
				t.Fatalf("Verify = true with error %v", err)
			}
			checkQuotesNothing(t, err.Error())
			return
		}
		for _, prefix := range []string{"$argon2i$", "$argon2id$", "$2y$", "$pbkdf2-sha256$"} {
			if strings.HasPrefix(hash, prefix) {
				return
			}
		}
		t.Fatalf("Verify(%q) returned no error for a hash of no known format", hash)
	})
}
