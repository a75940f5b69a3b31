;;; netc-mode.el --- Major mode and Eglot setup for netc's .net files  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0
;; Package-Requires: ((emacs "27.1") (eglot "1.9"))
;; Keywords: languages

;;; Commentary:

;; `netc-mode' for the `.net' files of netc (models, blocks and the scenarios that budget
;; them), and the Eglot entry that starts its language server, `netc lsp' (what it offers:
;; spec/lsp.md in the netc repository).
;;
;;   (add-to-list 'load-path "/path/to/netc/editors/emacs")
;;   (require 'netc-mode)
;;   (add-hook 'netc-mode-hook #'eglot-ensure)
;;
;; Inlay hints (each line's shape and memory in the active scenario): with an Eglot that has
;; `eglot-inlay-hints-mode' (Emacs 29.1 and newer), that mode is turned on in netc buffers;
;; with an older Eglot (1.9, as Debian 12 ships), `netc-inlay-hints-mode' asks the server for
;; the hints itself and shows them at the ends of their lines.  `netc-select-scenario' makes
;; a scenario of the file the active one (Eglot shows no code lenses), `netc-report' shows
;; `netc report' of the file.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'seq)

(defgroup netc nil
  "The netc language: neural networks and their memory budgets."
  :group 'languages
  :prefix "netc-")

(defcustom netc-program "netc"
  "The netc executable: a name on `exec-path', or a path."
  :type 'string)

(defcustom netc-indent-offset 4
  "Indentation of a level, as `netc fmt' lays files out."
  :type 'integer)

(defcustom netc-initialization-options '(:netc (:inlayHints (:enabled t)))
  "What the server receives as its initializationOptions (spec/lsp.md, \"Settings\").
A plist, converted to JSON: `(:netc (:inlayHints (:params t :maxLength 40)))'."
  :type 'sexp)

(defvar netc-mode-syntax-table
  (let ((st (make-syntax-table)))
    (modify-syntax-entry ?# "<" st)
    (modify-syntax-entry ?\n ">" st)
    (modify-syntax-entry ?\" "\"" st)
    (modify-syntax-entry ?\\ "\\" st)
    (modify-syntax-entry ?_ "_" st)
    (dolist (c '(?+ ?- ?* ?/ ?% ?@ ?= ?< ?> ?! ?, ?\; ?: ?.))
      (modify-syntax-entry c "." st))
    (modify-syntax-entry ?' "." st)
    st)
  "Syntax table of `netc-mode': `#' comments, double-quoted strings.")

(defconst netc--name "[A-Za-z_][A-Za-z0-9_]*")

(defconst netc-font-lock-keywords
  `((,(regexp-opt '("use" "op" "block" "model" "train" "infer" "return" "if" "else" "for" "in"
                    "repeat" "and" "or" "not")
                  'symbols)
     . font-lock-keyword-face)
    ;; `input' is a keyword only where a name follows (`input x: f32[N, 8]'); else a name.
    (,(concat "^[ \t]*\(input\)[ \t]+" netc--name) 1 font-lock-keyword-face)
    (,(regexp-opt '("true" "false") 'symbols) . font-lock-constant-face)
    (,(concat "\\_<\\(?:op\\|block\\)[ \t]+\\(" netc--name "\\)") 1 font-lock-function-name-face)
    (,(concat "\\_<\\(?:model\\|train\\|infer\\)[ \t]+\\(" netc--name "\\)[ \t]*[({]") 1 font-lock-type-face)
    ("\\_<\\(f64\\|f32\\|f16\\|bf16\\|i64\\|i32\\|i16\\|i8\\|u8\\|bool\\)\\[" 1 font-lock-type-face)
    (":[ \t]*\\[?\\(int\\|dim\\|float\\|bool\\|str\\|tensor\\)\\_>" 1 font-lock-type-face)
    ("->[ \t]*(?\\(tensors?\\)" 1 font-lock-type-face)
    ("[0-9][ \t]*\\(\\(?:[KkMmGgTt][Ii]?\\)?[Bb]\\)\\_>" 1 font-lock-builtin-face)
    (,(concat "\\(" netc--name "\\)[ \t]*=[^=]") 1 font-lock-variable-name-face))
  "Highlighting of `netc-mode': keywords, item names, types, units, assigned names.")

(defun netc-indent-line ()
  "Indent the current line by the brackets open at its start."
  (interactive)
  (let* ((depth (save-excursion (car (syntax-ppss (line-beginning-position)))))
         (closer (save-excursion (back-to-indentation) (looking-at-p "[])}]")))
         (column (* netc-indent-offset (max 0 (if closer (1- depth) depth)))))
    (if (<= (current-column) (current-indentation))
        (indent-line-to column)
      (save-excursion (indent-line-to column)))))

;;;###autoload
(define-derived-mode netc-mode prog-mode "netc"
  "Major mode for netc's .net files."
  :syntax-table netc-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local comment-end "")
  (setq-local font-lock-defaults '(netc-font-lock-keywords))
  (setq-local indent-line-function #'netc-indent-line)
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width netc-indent-offset)
  (setq-local electric-indent-chars (append "{}()[]" electric-indent-chars)))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.net\\'" . netc-mode))

;;; Eglot

(defun netc--contact (&rest _)
  "How Eglot starts the server: `netc lsp' with `netc-initialization-options'."
  (list netc-program "lsp" :initializationOptions netc-initialization-options))

(defvar eglot-server-programs)
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs '(netc-mode . netc--contact)))

(declare-function eglot-current-server "eglot")
(declare-function eglot--TextDocumentIdentifier "eglot")
(declare-function eglot-inlay-hints-mode "eglot")
(declare-function eglot--signal-textDocument/didChange "eglot")
(declare-function jsonrpc-request "jsonrpc")
(declare-function jsonrpc-async-request "jsonrpc")

(defface netc-inlay-hint-face '((t :inherit shadow :height 0.9))
  "Face of the inlay hints shown by `netc-inlay-hints-mode'.")

(defun netc--hint-label (label)
  "The text of an inlay hint's LABEL (a string or a vector of parts)."
  (if (stringp label) label
    (mapconcat (lambda (part) (plist-get part :value)) label "")))

(defun netc--show-hints (buffer hints)
  "Show HINTS (the server's answer) in BUFFER, at the ends of their lines."
  (with-current-buffer buffer
    (remove-overlays (point-min) (point-max) 'netc-hint t)
    (save-excursion
      (seq-doseq (hint hints)
        (let ((line (plist-get (plist-get hint :position) :line)))
          (goto-char (point-min))
          (when (zerop (forward-line line))
            (let ((ov (make-overlay (line-end-position) (line-end-position))))
              (overlay-put ov 'netc-hint t)
              (overlay-put ov 'evaporate nil)
              (overlay-put ov 'after-string
                           (propertize (concat "  " (netc--hint-label (plist-get hint :label)))
                                       'face 'netc-inlay-hint-face)))))))))

(defun netc--hint-params ()
  (list :textDocument (eglot--TextDocumentIdentifier)
        :range (list :start (list :line 0 :character 0)
                     :end (list :line (count-lines (point-min) (point-max)) :character 0))))

(defun netc-inlay-hints-refresh (&optional sync)
  "Ask the server for the hints of this buffer and show them.  With SYNC, wait."
  (interactive)
  (when-let ((server (eglot-current-server)))
    ;; Send the edits Eglot still holds back, so that the hints are of the text shown.
    (when (fboundp 'eglot--signal-textDocument/didChange)
      (eglot--signal-textDocument/didChange))
    (let ((buffer (current-buffer))
          (tick (buffer-modified-tick)))
      (if sync
          (netc--show-hints buffer (jsonrpc-request server :textDocument/inlayHint (netc--hint-params)))
        (jsonrpc-async-request
         server :textDocument/inlayHint (netc--hint-params)
         :success-fn (lambda (hints)
                       (when (and (buffer-live-p buffer)
                                  (= tick (buffer-modified-tick buffer)))
                         (netc--show-hints buffer hints)))
         :error-fn #'ignore
         :deferred :netc-inlay-hints)))))

(defvar-local netc--hint-timer nil)

(defun netc--schedule-hints (&rest _)
  (when (timerp netc--hint-timer) (cancel-timer netc--hint-timer))
  (let ((buffer (current-buffer)))
    (setq netc--hint-timer
          (run-with-timer 0.4 nil
                               (lambda ()
                                 (when (buffer-live-p buffer)
                                   (with-current-buffer buffer (netc-inlay-hints-refresh))))))))

(define-minor-mode netc-inlay-hints-mode
  "Show netc's inlay hints with an Eglot that has no `eglot-inlay-hints-mode'."
  :lighter nil
  (if netc-inlay-hints-mode
      (progn
        (add-hook 'after-change-functions #'netc--schedule-hints nil t)
        (netc--schedule-hints))
    (remove-hook 'after-change-functions #'netc--schedule-hints t)
    (remove-overlays (point-min) (point-max) 'netc-hint t)))

(defun netc--eglot-managed ()
  "Turn inlay hints on in a netc buffer Eglot manages."
  (when (derived-mode-p 'netc-mode)
    (if (fboundp 'eglot-inlay-hints-mode)
        (eglot-inlay-hints-mode 1)
      (netc-inlay-hints-mode (if (bound-and-true-p eglot--managed-mode) 1 -1)))))

(add-hook 'eglot-managed-mode-hook #'netc--eglot-managed)

(defun netc-scenario-lenses ()
  "The scenario lenses of this buffer: a list of (NAME . TITLE)."
  (let ((server (eglot-current-server)))
    (unless server (user-error "netc: no language server for this buffer"))
    (cl-loop for lens across (jsonrpc-request server :textDocument/codeLens
                                              (list :textDocument (eglot--TextDocumentIdentifier)))
             for command = (plist-get lens :command)
             when command
             collect (cons (aref (plist-get command :arguments) 1) (plist-get command :title)))))

(defun netc-select-scenario (name)
  "Make the scenario NAME of this file the active one.
Inlay hints and hovers then show its figures."
  (interactive
   (let ((lenses (netc-scenario-lenses)))
     (list (completing-read "Active scenario: "
                            (mapcar (lambda (l) (concat (car l) "  " (cdr l))) lenses)
                            nil t))))
  (let ((name (car (split-string name "  "))))
    (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                     (list :command "netc.setActiveScenario"
                           :arguments (vector (plist-get (eglot--TextDocumentIdentifier) :uri) name)))
    ;; Synchronously: a deferred request can wait for the next edit, and the hints would show
    ;; the old scenario until then.
    (when netc-inlay-hints-mode
      (condition-case nil (netc-inlay-hints-refresh t) (error (netc--schedule-hints))))
    (message "netc: active scenario %s" name)))

(defun netc-report ()
  "Show `netc report' of this file (as saved) in a buffer."
  (interactive)
  (let ((file buffer-file-name))
    (unless file (user-error "netc: save the buffer first"))
    (with-current-buffer (get-buffer-create "*netc report*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (call-process netc-program nil t nil "report" file "--color" "never"))
      (goto-char (point-min))
      (special-mode)
      (display-buffer (current-buffer)))))

(provide 'netc-mode)
;;; netc-mode.el ends here
