;;; e2e.el --- netc-mode and Eglot driven in batch against the real `netc lsp'  -*- lexical-binding: t; -*-

;; NETC_BIN=target/debug/netc emacs --batch -Q -l editors/emacs/test/e2e.el
;;
;; Opens a model in a temporary directory, and checks that the file is in `netc-mode', that
;; Eglot connects to `netc lsp', that diagnostics arrive (through Flymake), that inlay hints
;; arrive and are shown at the ends of their lines, that the scenario lenses arrive, that a
;; scenario can be made active, and that the hints follow an edit.  Exits 0 when every check
;; passed.

(require 'package)
;; Debian's elpa-eglot lives in /usr/share/emacs/site-lisp/elpa, which -Q leaves out.
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'flymake)

(defvar netc-test--here (file-name-directory (or load-file-name buffer-file-name)))
(load (expand-file-name "../netc-mode.el" netc-test--here) nil t)
(setq netc-program (or (getenv "NETC_BIN") "netc"))

(defvar netc-test--passed 0)
(defvar netc-test--failed 0)

(defun netc-test--check (name ok &optional detail)
  (if ok (cl-incf netc-test--passed) (cl-incf netc-test--failed))
  (princ (format "%s %s%s\n" (if ok "ok  " "FAIL") name (if detail (format "  %s" detail) ""))))

(defun netc-test--wait (predicate &optional seconds)
  "Process events until PREDICATE is non-nil or SECONDS pass; PREDICATE's value."
  (let ((deadline (+ (float-time) (or seconds 30)))
        value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun netc-test--hints ()
  "The hints shown: a list of (LINE . TEXT), 1-based lines."
  (sort (mapcar (lambda (ov)
                  (cons (line-number-at-pos (overlay-start ov))
                        (string-trim (substring-no-properties (overlay-get ov 'after-string)))))
                (seq-filter (lambda (ov) (overlay-get ov 'netc-hint))
                            (overlays-in (point-min) (point-max))))
        (lambda (a b) (< (car a) (car b)))))

(let* ((dir (make-temp-file "netc-emacs-" t))
       (file (expand-file-name "mlp.net" dir)))
  (with-temp-file file
    (insert "model mlp(classes: int = 10) {\n"
            "    input x: f32[N, 784]\n"
            "    h = relu(linear(x, 256))\n"
            "    unused_t = relu(h)\n"
            "    return linear(h, classes)\n"
            "}\n"
            "\n"
            "infer serve { model mlp()  batch 32  no_grad  eval  budget 64 MiB }\n"
            "train tune { model mlp()  batch 64  optimizer adam  budget 1 GiB }\n"))
  (find-file file)
  (netc-test--check "a .net file is in netc-mode" (eq major-mode 'netc-mode) major-mode)
  (netc-test--check "netc-mode indents a body" (progn (goto-char (point-min)) (forward-line 2)
                                                       (netc-indent-line) (= (current-indentation) 4)))
  (apply #'eglot (eglot--guess-contact))
  (netc-test--check "eglot connects to netc lsp"
                    (netc-test--wait (lambda () (and (eglot-current-server) (bound-and-true-p eglot--managed-mode))) 30))
  (let ((diags (netc-test--wait (lambda () (flymake-diagnostics)) 30)))
    (netc-test--check "diagnostics arrive: the unused variable"
                      (and diags (= 4 (line-number-at-pos (flymake-diagnostic-beg (car diags))))
                           (string-match-p "unused_t" (flymake-diagnostic-text (car diags))))
                      (mapconcat #'flymake-diagnostic-text diags " | ")))
  (netc-test--check "inlay hints are turned on"
                    (or (bound-and-true-p netc-inlay-hints-mode) (bound-and-true-p eglot-inlay-hints-mode)))
  (if (bound-and-true-p eglot-inlay-hints-mode)
      (netc-test--check "inlay hints (eglot-inlay-hints-mode) shown" t)
    (let ((hints (netc-test--wait (lambda () (assq 3 (netc-test--hints))) 30)))
      (netc-test--check "inlay hints arrive and are shown at their lines"
                        (and hints (string-match-p "f32\\[32, 256\\]" (cdr hints)))
                        (format "%S" (netc-test--hints)))))
  (let ((lenses (netc-scenario-lenses)))
    (netc-test--check "the scenario lenses arrive: memory against the budget"
                      (and (equal (mapcar #'car lenses) '("serve" "tune"))
                           (string-match-p "of 64.0 MiB budget" (cdr (car lenses))))
                      (format "%S" lenses)))
  (netc-select-scenario "tune")
  (netc-test--check "a scenario is made active"
                    (netc-test--wait (lambda () (let ((l (assoc "tune" (netc-scenario-lenses))))
                                                  (and l (string-prefix-p "● active" (cdr l))))) 10))
  (unless (bound-and-true-p eglot-inlay-hints-mode)
    (let ((hints (netc-test--wait (lambda () (let ((h (assq 3 (netc-test--hints))))
                                                (and h (string-match-p "f32\\[64, 256\\]" (cdr h)) h))) 30)))
      (netc-test--check "the hints show the active scenario's figures" hints (format "%S" (netc-test--hints))))
    ;; An edit: the layer widens, the hints follow (refreshed by the mode after the change).
    (goto-char (point-min))
    (search-forward "256")
    (replace-match "512")
    (let ((hints (netc-test--wait (lambda () (let ((h (assq 3 (netc-test--hints))))
                                                (and h (string-match-p "f32\\[64, 512\\]" (cdr h)) h))) 30)))
      (netc-test--check "after an edit the hints follow" hints (format "%S" (netc-test--hints)))))
  (princ (format "emacs e2e (Emacs %s, eglot %s): %d passed, %d failed\n"
                 emacs-version
                 (if (boundp 'eglot-version) eglot-version
                   (or (ignore-errors (package-version-join (package-desc-version (cadr (assq 'eglot package-alist))))) "?"))
                 netc-test--passed netc-test--failed))
  (ignore-errors (let ((eglot-autoshutdown t)) (eglot-shutdown (eglot-current-server))))
  (set-buffer-modified-p nil)
  (delete-directory dir t)
  (kill-emacs (if (zerop netc-test--failed) 0 1)))
